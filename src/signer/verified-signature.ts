import type { KeyObject } from 'node:crypto';
import type { BridgeError } from '../errors.js';
import { signerName, type AuthoritySigner } from './authority-signer.js';
import { ed25519PublicKeyObject, verifiesEd25519 } from './ed25519.js';
import { signerFailure } from './signer-failure.js';

/**
 * The one place a signature is checked before anything is sent with it: every transaction
 * (src/chain/client/submit/build/sign-transaction.ts) and the proof of a token or a key service at start (one
 * random challenge: pkcs11/pkcs11-signer.ts, remote/remote-signer.ts; a key file's pair is
 * checked as it is read). A signer is a device that answers; nothing it answers is taken on its word.
 * A signature that does not verify with the public key the signer showed is SIGNER__UNAVAILABLE
 * `key_mismatch`, whichever way the key is held, and never retried within a cycle
 * (src/failure-policy.ts; docs/key-custody.md, "A signature that does not verify").
 */

// One verification key per signer: building it costs a DER parse, verifying tens of microseconds.
const verifyKeys = new WeakMap<AuthoritySigner, KeyObject>();

export async function verifiedSignature(signer: AuthoritySigner, message: Uint8Array): Promise<Uint8Array> {
  const signature = await signer.sign(message);
  if (!verifiesEd25519(verifyKeyOf(signer), message, signature)) throw mismatch(signer);
  return signature;
}

function verifyKeyOf(signer: AuthoritySigner): KeyObject {
  let key = verifyKeys.get(signer);
  if (key === undefined) {
    key = ed25519PublicKeyObject(signer.publicKey);
    verifyKeys.set(signer, key);
  }
  return key;
}

function mismatch(signer: AuthoritySigner): BridgeError<'SIGNER__UNAVAILABLE'> {
  const detail = `the signature returned does not verify with the authority's public key ${signer.publicKey.toBase58()}; nothing was sent with it (the key that signs is not the key the signer showed at start)`;
  return signerFailure(signerName(signer.describe()), 'key_mismatch', detail);
}
