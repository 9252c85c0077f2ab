import { Keypair } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthoritySigner } from '../../../src/signer/authority-signer.js';
import { FileKeySigner } from '../../../src/signer/file-key-signer.js';
import { ed25519PublicKeyObject, verifiesEd25519 } from '../../../src/signer/ed25519.js';
import { loadAuthoritySigner } from '../../../src/signer/open-signer.js';
import { isBridgeError } from '../../../src/errors.js';
import { retriesAction } from '../../../src/failure-policy.js';
import { closeAllSessions, createSoftHsm, TOKEN_PIN, type SoftHsm } from '../../support/softhsm.js';

/**
 * The PKCS#11 signer against a real SoftHSM token of this file's own (SOFTHSM2_CONF names a
 * temporary directory; the module reads it once per process, so every token is made first).
 */

const authority = Keypair.fromSeed(new Uint8Array(32).fill(23));
const message = Buffer.from('a Solana transaction message');
let hsm: SoftHsm;

beforeAll(() => {
  hsm = createSoftHsm();
  process.env['SOFTHSM2_CONF'] = hsm.env.SOFTHSM2_CONF;
  hsm.initToken('bridge');
  hsm.importKeypair('bridge', 'authority', '01', authority);
  hsm.generateKey('bridge', 'generated', '02', 'EC:edwards25519');
  hsm.generateKey('bridge', 'rsa', '03', 'rsa:1024');
  hsm.importKeypair('bridge', 'twin', '04', Keypair.generate());
  hsm.importKeypair('bridge', 'twin', '05', Keypair.generate());
});
afterAll(() => {
  hsm.remove();
});

async function open(path: string, query = `pin-source=file:${hsm.pinFile()}`): Promise<AuthoritySigner> {
  const { signer, warnings } = await loadAuthoritySigner(hsm.uri(path, query));
  expect(warnings).toEqual([]);
  return signer;
}

async function problemOf(uri: string): Promise<string> {
  try {
    await loadAuthoritySigner(uri);
  } catch (err) {
    if (isBridgeError(err, 'CONFIG__INVALID') && err.context.problems.length === 1) {
      expect(err.message).not.toContain(TOKEN_PIN);
      return err.context.problems[0]!;
    }
    throw err;
  }
  throw new Error('expected the signer to be refused');
}

// First: PKCS#11 login state belongs to the process, so once a signer below holds a logged-in
// session, a new session is logged in already and a wrong PIN is never asked about.
describe('the PKCS#11 signer refuses to start with one line naming BRIDGE_AUTHORITY_KEYPAIR', () => {
  const prefix = 'BRIDGE_AUTHORITY_KEYPAIR: PKCS#11: ';
  it.each([
    ['a wrong PIN', 'token=bridge;object=authority', 'pin-value=wrong-pin', 'the token refused the PIN (CKR_PIN_INCORRECT)'],
    ['an unknown key label', 'token=bridge;object=nope', undefined, 'no private key matches object="nope" in the token'],
    ['an unknown token', 'token=nope;object=authority', undefined, 'no initialized token matches token="nope" (tokens present: "bridge")'],
    ['a key that is not Ed25519', 'token=bridge;object=rsa', undefined, 'the key is not an Ed25519 key (CKA_KEY_TYPE 0x0)'],
    ['two keys under one label', 'token=bridge;object=twin', undefined, '2 private keys match object="twin"; add id= to pick one'],
  ])('%s', async (_, path, query, problem) => {
    const line = await problemOf(hsm.uri(path, query ?? `pin-source=file:${hsm.pinFile()}`));
    expect(line.startsWith(prefix)).toBe(true);
    expect(line).toContain(problem);
  });

  it('a module path that does not exist', async () => {
    const line = await problemOf(`pkcs11:token=bridge;object=authority?module-path=/nonexistent/libvendor.so&pin-value=${TOKEN_PIN}`);
    expect(line).toBe(
      `${prefix}module-path "/nonexistent/libvendor.so" cannot be loaded (/nonexistent/libvendor.so: cannot open shared object file: No such file or directory); install the vendor's PKCS#11 module or fix the path`,
    );
  });

  it('a PIN file that is missing or empty', async () => {
    expect(await problemOf(hsm.uri('token=bridge;object=authority', `pin-source=file:${hsm.dir}/absent`))).toMatch(
      /^BRIDGE_AUTHORITY_KEYPAIR: PKCS#11 URI: pin-source file .* cannot be read \(ENOENT\)/,
    );
    expect(await problemOf(hsm.uri('token=bridge;object=authority', `pin-source=file:${hsm.pinFile('')}`))).toContain('is empty');
  });
});

describe('the PKCS#11 signer on a SoftHSM token', () => {
  it('signs with an imported key exactly as the file key does (Ed25519 is deterministic)', async () => {
    const signer = await open('token=bridge;object=authority');
    expect(signer.publicKey.equals(authority.publicKey)).toBe(true);
    expect(Buffer.from(await signer.sign(message))).toEqual(Buffer.from(await new FileKeySigner(authority).sign(message)));
    expect(signer.describe()).toEqual({ kind: 'pkcs11', token: 'bridge', session: 'open' });
    expect(JSON.stringify({ signer })).not.toContain(TOKEN_PIN);
  });

  it('uses a key generated inside the token (CKA_EC_POINT as a DER OCTET STRING), selected by id', async () => {
    const signer = await open('token=bridge;id=%02', `pin-value=${TOKEN_PIN}`);
    expect(verifiesEd25519(ed25519PublicKeyObject(signer.publicKey), message, await signer.sign(message))).toBe(true);
  });

  it('picks the only initialized token when the URI names none, and reports the label the token itself reports', async () => {
    const signer = await open('object=authority');
    expect(signer.publicKey.equals(authority.publicKey)).toBe(true);
    expect(signer.describe()).toEqual({ kind: 'pkcs11', token: 'bridge', session: 'open' });
  });

  it('queues concurrent signatures: one operation at a time per session', async () => {
    const signer = await open('token=bridge;object=authority');
    const signatures = await Promise.all(Array.from({ length: 8 }, (_, i) => signer.sign(Buffer.from([i]))));
    const key = ed25519PublicKeyObject(signer.publicKey);
    expect(signatures.every((signature, i) => verifiesEd25519(key, Buffer.from([i]), signature))).toBe(true);
  });

  it('re-opens and logs in again after the session is lost, and says so meanwhile', async () => {
    const signer = await open('token=bridge;object=authority');
    closeAllSessions(hsm.modulePath);
    const failure = await signer.sign(message).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(isBridgeError(failure, 'SIGNER__UNAVAILABLE') && failure.context.reason).toBe('session_lost');
    expect(String((failure as Error).message)).toContain('CKR_SESSION_HANDLE_INVALID');
    expect(retriesAction(failure)).toBe(true);
    expect(signer.describe()).toEqual({ kind: 'pkcs11', token: 'bridge', session: 'lost' });
    expect(verifiesEd25519(ed25519PublicKeyObject(authority.publicKey), message, await signer.sign(message))).toBe(true);
    expect(signer.describe()).toEqual({ kind: 'pkcs11', token: 'bridge', session: 'open' });
  });
});
