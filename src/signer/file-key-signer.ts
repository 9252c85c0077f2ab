import { sign, type KeyObject } from 'node:crypto';
import type { Keypair, PublicKey } from '@solana/web3.js';
import type { AuthoritySigner, SignerDescription } from './authority-signer.js';
import { ed25519PrivateKeyObject } from './ed25519.js';

/**
 * The authority key read from a Solana CLI keypair file, signing with Node's native Ed25519
 * (OpenSSL) rather than web3.js's JavaScript one: `Transaction.sign` plus `serialize()` cost
 * about 4 ms of blocked event loop per transaction, which /health latency shows while a cycle
 * submits; natively a signature takes tens of microseconds.
 */

export class FileKeySigner implements AuthoritySigner {
  readonly publicKey: PublicKey;
  readonly #privateKey: KeyObject;

  constructor(keypair: Keypair) {
    this.publicKey = keypair.publicKey;
    this.#privateKey = ed25519PrivateKeyObject(keypair.secretKey.subarray(0, 32));
  }

  sign(message: Uint8Array): Promise<Uint8Array> {
    return Promise.resolve(sign(null, message, this.#privateKey));
  }

  describe(): SignerDescription {
    return { kind: 'file' };
  }

  /** Keeps the key material out of logs and inspectors. */
  toJSON(): string {
    return `FileKeySigner(${this.publicKey.toBase58()})`;
  }
}
