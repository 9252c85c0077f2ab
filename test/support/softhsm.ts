import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Keypair } from '@solana/web3.js';
import pkcs11js from 'pkcs11js';
import { ed25519PrivateKeyDer } from '../../src/signer/ed25519.js';

/**
 * A SoftHSM token store of the test's own, in a temporary directory named by SOFTHSM2_CONF:
 * nothing outside it is touched. softhsm2-util and pkcs11-tool (opensc) put keys in as an
 * operator would. .ci/run installs both; without them the tests fail saying so, never skip.
 */

const MODULE_CANDIDATES = [
  '/usr/lib/softhsm/libsofthsm2.so',
  '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so',
  '/usr/local/lib/softhsm/libsofthsm2.so',
];
const TOOL_TIMEOUT_MS = 30_000;

export const TOKEN_PIN = 'pin-7c1e-DO-NOT-LEAK';

export interface SoftHsm {
  dir: string;
  modulePath: string;
  /** SOFTHSM2_CONF for processes that use this store. */
  env: { SOFTHSM2_CONF: string };
  initToken(label: string): void;
  /** softhsm2-util --import: CKA_EC_POINT as 32 raw bytes. */
  importKeypair(token: string, label: string, id: string, keypair: Keypair): void;
  /** pkcs11-tool --keypairgen inside the token: CKA_EC_POINT as a DER OCTET STRING. */
  generateKey(token: string, label: string, id: string, keyType: 'EC:edwards25519' | 'rsa:1024'): void;
  /** The public key of `label` as pkcs11-tool --list-objects shows it (CKA_EC_POINT, DER unwrapped). */
  listedPublicKey(token: string, label: string): Uint8Array;
  /** A file holding the PIN, as a secret volume would mount it (with a trailing newline). */
  pinFile(pin?: string): string;
  uri(path: string, query?: string): string;
  remove(): void;
}

function softHsmModulePath(): string {
  const found = MODULE_CANDIDATES.find((path) => existsSync(path));
  if (found === undefined)
    throw new Error(
      `softhsm2 is not installed (no libsofthsm2.so in ${MODULE_CANDIDATES.join(', ')}): run apt-get install softhsm2 opensc, as .ci/run does`,
    );
  return found;
}

export function createSoftHsm(): SoftHsm {
  const modulePath = softHsmModulePath();
  const dir = mkdtempSync(join(tmpdir(), 'bridge-softhsm-'));
  const tokens = join(dir, 'tokens');
  mkdirSync(tokens);
  const conf = join(dir, 'softhsm2.conf');
  writeFileSync(conf, `directories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  const env = { SOFTHSM2_CONF: conf };
  const run = (tool: string, args: string[]): string => {
    try {
      return execFileSync(tool, args, {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: TOOL_TIMEOUT_MS,
        encoding: 'utf8',
      });
    } catch (err) {
      const { stderr, code } = err as { stderr?: string; code?: string };
      if (code === 'ENOENT') throw new Error(`${tool} is not installed: run apt-get install softhsm2 opensc, as .ci/run does`);
      throw new Error(`${tool} ${args[0]} failed: ${stderr ?? String(err)}`);
    }
  };
  let pinFiles = 0;
  return {
    dir,
    modulePath,
    env,
    initToken(label) {
      run('softhsm2-util', ['--init-token', '--free', '--label', label, '--pin', TOKEN_PIN, '--so-pin', `so-${TOKEN_PIN}`]);
    },
    importKeypair(token, label, id, keypair) {
      const seed = ed25519PrivateKeyDer(keypair.secretKey.subarray(0, 32)).toString('base64');
      const pem = join(dir, `import-${label}.pem`);
      writeFileSync(pem, `-----BEGIN PRIVATE KEY-----\n${seed}\n-----END PRIVATE KEY-----\n`, { mode: 0o600 });
      try {
        run('softhsm2-util', ['--import', pem, '--token', token, '--label', label, '--id', id, '--pin', TOKEN_PIN]);
      } finally {
        rmSync(pem);
      }
    },
    generateKey(token, label, id, keyType) {
      run('pkcs11-tool', [
        '--module',
        modulePath,
        '--token-label',
        token,
        '--login',
        '--pin',
        TOKEN_PIN,
        '--keypairgen',
        '--key-type',
        keyType,
        '--label',
        label,
        '--id',
        id,
      ]);
    },
    listedPublicKey(token, label) {
      const listing = run('pkcs11-tool', ['--module', modulePath, '--token-label', token, '--list-objects', '--type', 'pubkey']);
      const block = listing.split('Public Key Object').find((text) => new RegExp(`label:\\s+${label}\\n`).test(text));
      const point = /EC_POINT:\s+([0-9a-f]+)/.exec(block ?? '')?.[1];
      if (point === undefined) throw new Error(`pkcs11-tool lists no public key ${label}:\n${listing}`);
      return Buffer.from(point.length === 68 && point.startsWith('0420') ? point.slice(4) : point, 'hex');
    },
    pinFile(pin = TOKEN_PIN) {
      const path = join(dir, `pin-${pinFiles++}`);
      writeFileSync(path, `${pin}\n`, { mode: 0o600 });
      return path;
    },
    uri(path, query = '') {
      return `pkcs11:${path}?module-path=${modulePath}${query === '' ? '' : `&${query}`}`;
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A second binding of the module this process has loaded (dlopen gives the same one): its sessions, its state. */
function loadedModule(modulePath: string): InstanceType<typeof pkcs11js.PKCS11> {
  const module = new pkcs11js.PKCS11();
  module.load(modulePath);
  try {
    module.C_Initialize();
  } catch (err) {
    if (!(err instanceof pkcs11js.Pkcs11Error && err.message === 'CKR_CRYPTOKI_ALREADY_INITIALIZED')) throw err;
  }
  return module;
}

/**
 * What an HSM restart does to this process's sessions: every handle invalid, logged out. The
 * module is one per process (dlopen), so a second binding reaches the signer's sessions.
 */
export function closeAllSessions(modulePath: string): void {
  const module = loadedModule(modulePath);
  for (const slot of module.C_GetSlotList(true)) module.C_CloseAllSessions(slot);
}

/** What a device reset does to a module that needs C_Initialize again: C_Finalize, from a second binding of the same module. */
export function finalizeModule(modulePath: string): void {
  const module = loadedModule(modulePath);
  module.C_Finalize();
}

/**
 * Replaces the public key object of `label` with one whose CKA_EC_PARAMS names the curve as
 * `params` (DER), as tokens other than SoftHSM write it (Thales Luna: PrintableString "Ed25519").
 */
export function rewriteCurveParams(modulePath: string, token: string, label: string, params: Buffer): void {
  const module = loadedModule(modulePath);
  const slot = module.C_GetSlotList(true).find((s) => module.C_GetTokenInfo(s).label.trimEnd() === token);
  if (slot === undefined) throw new Error(`no token ${token}`);
  const session = module.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
  try {
    try {
      module.C_Login(session, pkcs11js.CKU_USER, TOKEN_PIN);
    } catch (err) {
      if (!(err instanceof pkcs11js.Pkcs11Error && err.message === 'CKR_USER_ALREADY_LOGGED_IN')) throw err;
    }
    module.C_FindObjectsInit(session, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PUBLIC_KEY },
      { type: pkcs11js.CKA_LABEL, value: label },
    ]);
    const [handle] = module.C_FindObjects(session, 1);
    module.C_FindObjectsFinal(session);
    if (handle === undefined) throw new Error(`no public key ${label}`);
    const [id, point] = module.C_GetAttributeValue(session, handle, [{ type: pkcs11js.CKA_ID }, { type: pkcs11js.CKA_EC_POINT }]);
    module.C_DestroyObject(session, handle);
    module.C_CreateObject(session, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PUBLIC_KEY },
      { type: pkcs11js.CKA_KEY_TYPE, value: 0x40 /* CKK_EC_EDWARDS */ },
      { type: pkcs11js.CKA_TOKEN, value: true },
      { type: pkcs11js.CKA_LABEL, value: label },
      { type: pkcs11js.CKA_ID, value: id!.value as Buffer },
      { type: pkcs11js.CKA_EC_PARAMS, value: params },
      { type: pkcs11js.CKA_EC_POINT, value: point!.value as Buffer },
    ]);
  } finally {
    module.C_CloseSession(session);
  }
}
