import { createPrivateKey, createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { PublicKey } from '@solana/web3.js';

// RFC 8410: SPKI wrapping of a raw 32-byte Ed25519 public key, PKCS#8 wrapping of a raw 32-byte seed.
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The private key of a 32-byte Ed25519 seed (the first half of a Solana secret key), as PKCS#8 DER. */
export function ed25519PrivateKeyDer(seed: Uint8Array): Buffer {
  return Buffer.concat([PKCS8_ED25519_PREFIX, seed]);
}

export function ed25519PrivateKeyObject(seed: Uint8Array): KeyObject {
  return createPrivateKey({ key: ed25519PrivateKeyDer(seed), format: 'der', type: 'pkcs8' });
}

/** The raw 32-byte public key of a 32-byte seed. */
export function ed25519PublicKeyOfSeed(seed: Uint8Array): Buffer {
  const spki = createPublicKey(ed25519PrivateKeyObject(seed)).export({ format: 'der', type: 'spki' });
  return spki.subarray(SPKI_ED25519_PREFIX.length);
}

export function ed25519PublicKeyObject(publicKey: PublicKey): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, publicKey.toBuffer()]), format: 'der', type: 'spki' });
}

/** Node's native (OpenSSL) Ed25519 verification: tens of microseconds, unlike web3.js's JavaScript one. */
export function verifiesEd25519(publicKey: KeyObject, message: Uint8Array, signature: Uint8Array): boolean {
  return signature.length === 64 && verify(null, message, publicKey, signature);
}

/** The raw 32-byte key of an Ed25519 SubjectPublicKeyInfo (DER), or undefined when it is another key. */
export function ed25519RawFromSpki(der: Uint8Array): Uint8Array | undefined {
  const bytes = Buffer.from(der);
  if (bytes.length !== SPKI_ED25519_PREFIX.length + 32 || !bytes.subarray(0, SPKI_ED25519_PREFIX.length).equals(SPKI_ED25519_PREFIX))
    return undefined;
  return Uint8Array.from(bytes.subarray(SPKI_ED25519_PREFIX.length));
}
