import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { Transaction, type Keypair, type TransactionInstruction } from '@solana/web3.js';

/**
 * Signs legacy transactions with Node's native ed25519 (OpenSSL) instead of web3.js's
 * JavaScript one: `Transaction.sign` plus `serialize()` cost about 4 ms of blocked event loop per
 * transaction (a signature, then a verification, in JS), which /health latency shows while a
 * cycle submits; natively both take tens of microseconds. The signature is checked against the
 * public key before the bytes leave, as web3.js's serialize() would.
 */

// RFC 8410: PKCS#8 wrapping of a raw 32-byte ed25519 seed, and SPKI of a raw public key.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export interface SignedWire {
  wire: Uint8Array;
  signature: Uint8Array;
}

export class NativeSigner {
  readonly #privateKey: KeyObject;
  readonly #publicKey: KeyObject;
  readonly #keypair: Keypair;

  constructor(keypair: Keypair) {
    this.#keypair = keypair;
    this.#privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, keypair.secretKey.subarray(0, 32)]), format: 'der', type: 'pkcs8' });
    this.#publicKey = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, keypair.publicKey.toBuffer()]), format: 'der', type: 'spki' });
  }

  /** A legacy transaction of `instructions`, paid and signed by this key alone. */
  signTransaction(instructions: readonly TransactionInstruction[], blockhash: string, lastValidBlockHeight: number): SignedWire {
    const feePayer = this.#keypair.publicKey;
    const transaction = new Transaction({ feePayer, blockhash, lastValidBlockHeight }).add(...instructions);
    const message = transaction.serializeMessage();
    const signature = sign(null, message, this.#privateKey);
    if (!verify(null, message, this.#publicKey, signature)) throw new Error('the ed25519 signature does not verify against the authority public key');
    transaction.addSignature(feePayer, signature);
    return { wire: transaction.serialize({ verifySignatures: false }), signature };
  }

  /** Keeps the key material out of logs and inspectors. */
  toJSON(): string {
    return `NativeSigner(${this.#keypair.publicKey.toBase58()})`;
  }
}
