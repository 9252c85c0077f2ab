import { randomBytes } from 'node:crypto';
import { PublicKey } from '@solana/web3.js';
import pkcs11js from 'pkcs11js';
import { BridgeError, isBridgeError, type SignerFailure } from '../../errors.js';
import type { AuthoritySigner, SignerDescription } from '../authority-signer.js';
import { ed25519PublicKeyObject, verifiesEd25519 } from '../ed25519.js';

/**
 * The authority key inside a token reached through a PKCS#11 module (an HSM, a cloud HSM's
 * library, SoftHSM in tests): the private key never enters this process, which holds one
 * logged-in session and asks the token for each signature (CKM_EDDSA).
 *
 * A failed signature drops the session (a token removed or an HSM restarted invalidates it);
 * the next signature opens a new one, logs in and finds the key again, which must still be the
 * same public key. Each signature therefore costs at most one re-open, and the crank's attempts
 * (BRIDGE_CRANK_MAX_ATTEMPTS, with backoff) bound how often it is tried; whether a failure is
 * tried again is src/failure-policy.ts's decision from the `reason` reported here.
 *
 * PKCS#11 allows one operation at a time per session: signatures are queued, at most one per
 * chain's sender (two) waiting. A call into the module cannot be cancelled; the crank's
 * attempt deadline bounds how long the crank waits for one.
 */

// PKCS#11 3.0 values that pkcs11js does not name.
const CKM_EDDSA = 0x1057;
const CKK_EC_EDWARDS = 0x40;
const CKF_TOKEN_INITIALIZED = 0x400;
// Ed25519's curve as CKA_EC_PARAMS: the OID 1.3.101.112, or the PrintableString "edwards25519".
const ED25519_PARAMS = ['06032b6570', '130c656477617264733235353139'];
const ED25519_SIGNATURE_BYTES = 64;
// More keys than this matching one URI is a selection problem, whatever the exact count.
const MAX_MATCHES = 16;

// Results after which the session (or the module's view of the token) is gone: re-open.
const SESSION_LOST = new Set(['CKR_SESSION_HANDLE_INVALID', 'CKR_SESSION_CLOSED', 'CKR_DEVICE_REMOVED', 'CKR_TOKEN_NOT_PRESENT', 'CKR_DEVICE_ERROR', 'CKR_USER_NOT_LOGGED_IN', 'CKR_KEY_HANDLE_INVALID', 'CKR_OBJECT_HANDLE_INVALID', 'CKR_TOKEN_NOT_RECOGNIZED', 'CKR_SLOT_ID_INVALID']);
const LOGIN_REFUSED = new Set(['CKR_PIN_INCORRECT', 'CKR_PIN_LOCKED', 'CKR_PIN_EXPIRED', 'CKR_PIN_INVALID', 'CKR_PIN_LEN_RANGE']);

export interface Pkcs11Options {
  modulePath: string;
  token?: string;
  serial?: string;
  slotId?: number;
  object?: string;
  id?: Uint8Array;
  /** Used to log in at start and at every re-open; never logged or put in an error. */
  pin: string;
}

interface OpenSession {
  /** The token's label as the module reports it, for /health and the ops CLI. */
  token: string;
  session: Buffer;
  privateKey: Buffer;
  publicKey: PublicKey;
}

type Module = InstanceType<typeof pkcs11js.PKCS11>;

/** Loads the module, logs in, finds the key pair and proves it with one signature; throws SIGNER__UNAVAILABLE saying what is wrong. */
export async function openPkcs11Signer(options: Pkcs11Options): Promise<Pkcs11Signer> {
  const module = loadModule(options.modulePath);
  const open = openSession(module, options);
  const signer = new Pkcs11Signer(module, options, open);
  const challenge = randomBytes(32);
  let signature: Uint8Array;
  try {
    signature = await signer.sign(challenge);
  } catch (err) {
    const code = resultCode((err as Error).cause) ?? firstLine(err);
    throw failure('sign_failed', `the key does not sign (${code}); it needs CKA_SIGN and a token that supports CKM_EDDSA`, err);
  }
  if (!verifiesEd25519(ed25519PublicKeyObject(open.publicKey), challenge, signature)) {
    throw failure('key_mismatch', 'the private key does not sign for the public key found beside it (same label/id); the token holds a mismatched pair');
  }
  return signer;
}

export class Pkcs11Signer implements AuthoritySigner {
  readonly publicKey: PublicKey;
  readonly #module: Module;
  readonly #options: Pkcs11Options;
  readonly #token: string;
  #open: OpenSession | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(module: Module, options: Pkcs11Options, open: OpenSession) {
    this.#module = module;
    this.#options = options;
    this.#open = open;
    this.publicKey = open.publicKey;
    this.#token = open.token;
  }

  sign(message: Uint8Array): Promise<Uint8Array> {
    const next = this.#queue.then(() => this.#signNow(message));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  describe(): SignerDescription {
    return { kind: 'pkcs11', token: this.#token, session: this.#open === undefined ? 'lost' : 'open' };
  }

  /** Keeps the PIN and handles out of logs and inspectors. */
  toJSON(): string {
    return `Pkcs11Signer(${this.#token}, ${this.publicKey.toBase58()})`;
  }

  async #signNow(message: Uint8Array): Promise<Uint8Array> {
    const open = this.#open ?? this.#reopen();
    try {
      this.#module.C_SignInit(open.session, { mechanism: CKM_EDDSA }, open.privateKey);
      return await signAsync(this.#module, open.session, Buffer.from(message));
    } catch (err) {
      this.#drop(open);
      const code = resultCode(err);
      const reason: SignerFailure = code !== undefined && SESSION_LOST.has(code) ? 'session_lost' : 'sign_failed';
      throw failure(reason, `the token refused to sign (${code ?? firstLine(err)}); the next signature re-opens the session and logs in again`, err);
    }
  }

  #reopen(): OpenSession {
    const open = openSession(this.#module, this.#options);
    if (!open.publicKey.equals(this.publicKey)) {
      this.#drop(open);
      throw failure('key_changed', `the key found after re-opening the session is ${open.publicKey.toBase58()}, not ${this.publicKey.toBase58()}; restart the server to take a new key`);
    }
    this.#open = open;
    return open;
  }

  #drop(open: OpenSession): void {
    this.#open = undefined;
    try {
      this.#module.C_CloseSession(open.session);
    } catch {
      // The session is already gone: that is why it is dropped.
    }
  }
}

function signAsync(module: Module, session: Buffer, data: Buffer): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    module.C_Sign(session, data, Buffer.alloc(ED25519_SIGNATURE_BYTES), (err, signature) => (err ? reject(err) : resolve(Uint8Array.from(signature))));
  });
}

function loadModule(modulePath: string): Module {
  const module = new pkcs11js.PKCS11();
  try {
    module.load(modulePath);
  } catch (err) {
    throw failure('module_not_loaded', `module-path ${JSON.stringify(modulePath)} cannot be loaded (${firstLine(err)}); install the vendor's PKCS#11 module or fix the path`, err);
  }
  try {
    // C_Sign runs on libuv's thread pool, other calls on the main thread: the module must lock.
    module.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
  } catch (err) {
    if (resultCode(err) !== 'CKR_CRYPTOKI_ALREADY_INITIALIZED') throw failure('module_not_loaded', `module ${JSON.stringify(modulePath)} failed to initialize (${resultCode(err) ?? firstLine(err)})`, err);
  }
  return module;
}

function openSession(module: Module, options: Pkcs11Options): OpenSession {
  const { slot, label: token } = findSlot(module, options);
  let session: Buffer;
  try {
    session = module.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION);
  } catch (err) {
    throw failure('session_lost', `cannot open a session with the token (${resultCode(err) ?? firstLine(err)})`, err);
  }
  try {
    login(module, session, options.pin);
    const privateKey = findOne(module, session, pkcs11js.CKO_PRIVATE_KEY, options, 'private key');
    checkEd25519(module, session, privateKey);
    return { token, session, privateKey, publicKey: readPublicKey(module, session, privateKey, options) };
  } catch (err) {
    try {
      module.C_CloseSession(session);
    } catch {
      // Reporting the first failure matters more than a session that closes itself.
    }
    if (isBridgeError(err, 'SIGNER__UNAVAILABLE')) throw err;
    throw failure('session_lost', `cannot read the key's objects in the token (${resultCode(err) ?? firstLine(err)})`, err);
  }
}

function findSlot(module: Module, options: Pkcs11Options): { slot: Buffer; label: string } {
  const tokens = presentTokens(module);
  const matching = tokens.filter(({ slot, label, serial }) => {
    if (options.token !== undefined && label !== options.token) return false;
    if (options.serial !== undefined && serial !== options.serial) return false;
    return options.slotId === undefined || slot.readUInt32LE(0) === options.slotId;
  });
  const wanted = selectionText(options, ['token', 'serial', 'slotId']) || 'any token';
  const present = tokens.map(({ label }) => JSON.stringify(label)).join(', ') || 'none';
  if (matching.length === 0) throw failure('token_not_found', `no initialized token matches ${wanted} (tokens present: ${present})`);
  if (matching.length > 1) throw failure('token_not_found', `${matching.length} tokens match ${wanted} (${present}); add serial= to pick one`);
  return matching[0]!;
}

function presentTokens(module: Module): { slot: Buffer; label: string; serial: string }[] {
  try {
    return module
      .C_GetSlotList(true)
      .map((slot) => ({ slot, info: module.C_GetTokenInfo(slot) }))
      .filter(({ info }) => (info.flags & CKF_TOKEN_INITIALIZED) !== 0)
      .map(({ slot, info }) => ({ slot, label: info.label.trimEnd(), serial: info.serialNumber.trimEnd() }));
  } catch (err) {
    throw failure('token_not_found', `cannot list the module's tokens (${resultCode(err) ?? firstLine(err)})`, err);
  }
}

function login(module: Module, session: Buffer, pin: string): void {
  try {
    module.C_Login(session, pkcs11js.CKU_USER, pin);
  } catch (err) {
    const code = resultCode(err);
    if (code === 'CKR_USER_ALREADY_LOGGED_IN') return;
    if (code !== undefined && LOGIN_REFUSED.has(code)) throw failure('login_refused', `the token refused the PIN (${code}); check the file pin-source names`, err);
    throw failure('session_lost', `cannot log in to the token (${code ?? firstLine(err)})`, err);
  }
}

function findOne(module: Module, session: Buffer, objectClass: number, options: Pkcs11Options, what: string): Buffer {
  const template: pkcs11js.Template = [{ type: pkcs11js.CKA_CLASS, value: objectClass }];
  if (options.object !== undefined) template.push({ type: pkcs11js.CKA_LABEL, value: options.object });
  if (options.id !== undefined) template.push({ type: pkcs11js.CKA_ID, value: Buffer.from(options.id) });
  module.C_FindObjectsInit(session, template);
  let found: Buffer[];
  try {
    found = module.C_FindObjects(session, MAX_MATCHES);
  } finally {
    module.C_FindObjectsFinal(session);
  }
  const wanted = selectionText(options, ['object', 'id']);
  if (found.length === 0) throw failure('key_not_found', `no ${what} matches ${wanted} in the token; check object=/id= (pkcs11-tool --list-objects shows them)`);
  if (found.length > 1) throw failure('key_not_found', `${found.length} ${what}s match ${wanted}; add id= to pick one`);
  return found[0]!;
}

function checkEd25519(module: Module, session: Buffer, privateKey: Buffer): void {
  const [keyType] = module.C_GetAttributeValue(session, privateKey, [{ type: pkcs11js.CKA_KEY_TYPE }]);
  const type = keyType?.value instanceof Buffer ? ulong(keyType.value) : undefined;
  if (type !== CKK_EC_EDWARDS) throw failure('not_ed25519', `the key is not an Ed25519 key (CKA_KEY_TYPE 0x${type?.toString(16) ?? '?'}); Solana signs with Ed25519 (CKK_EC_EDWARDS)`);
}

/** A CK_ULONG attribute: 8 bytes on 64-bit Linux, 4 on Windows and 32-bit platforms. */
function ulong(value: Buffer): number | undefined {
  if (value.length === 8) return Number(value.readBigUInt64LE());
  return value.length === 4 ? value.readUInt32LE() : undefined;
}

/** The public key object beside the private one (same CKA_ID, or the same label when it has none). */
function readPublicKey(module: Module, session: Buffer, privateKey: Buffer, options: Pkcs11Options): PublicKey {
  const [idAttribute] = module.C_GetAttributeValue(session, privateKey, [{ type: pkcs11js.CKA_ID }]);
  const id = idAttribute?.value instanceof Buffer && idAttribute.value.length > 0 ? idAttribute.value : options.id;
  const handle = findOne(module, session, pkcs11js.CKO_PUBLIC_KEY, { ...options, ...(id === undefined ? {} : { id }) }, 'public key');
  const [params, point] = module.C_GetAttributeValue(session, handle, [{ type: pkcs11js.CKA_EC_PARAMS }, { type: pkcs11js.CKA_EC_POINT }]);
  const paramsHex = params?.value instanceof Buffer ? params.value.toString('hex') : '';
  if (!ED25519_PARAMS.includes(paramsHex)) throw failure('not_ed25519', 'the key is an Edwards key but not on edwards25519 (Ed448?); Solana signs with Ed25519');
  return new PublicKey(ecPointBytes(point?.value instanceof Buffer ? point.value : Buffer.alloc(0)));
}

/** CKA_EC_POINT holds the 32 bytes raw (SoftHSM's import) or as a DER OCTET STRING (keys generated in most tokens). */
function ecPointBytes(point: Buffer): Buffer {
  if (point.length === 32) return point;
  if (point.length === 34 && point[0] === 0x04 && point[1] === 0x20) return point.subarray(2);
  throw failure('not_ed25519', `the public key's CKA_EC_POINT is ${point.length} bytes, neither 32 raw bytes nor a DER OCTET STRING of 32`);
}

function selectionText(options: Pkcs11Options, keys: readonly ('token' | 'serial' | 'slotId' | 'object' | 'id')[]): string {
  const names = { token: 'token', serial: 'serial', slotId: 'slot-id', object: 'object', id: 'id' } as const;
  return keys
    .filter((key) => options[key] !== undefined)
    .map((key) => {
      const value = options[key];
      return `${names[key]}=${value instanceof Uint8Array ? Buffer.from(value).toString('hex') : JSON.stringify(value)}`;
    })
    .join(' ');
}

function resultCode(err: unknown): string | undefined {
  return err instanceof pkcs11js.Pkcs11Error && err.message.startsWith('CKR_') ? err.message : undefined;
}

function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0]!.slice(0, 200);
}

function failure(reason: SignerFailure, message: string, cause?: unknown): BridgeError<'SIGNER__UNAVAILABLE'> {
  return new BridgeError('SIGNER__UNAVAILABLE', { reason }, `PKCS#11: ${message}`, cause === undefined ? undefined : { cause });
}
