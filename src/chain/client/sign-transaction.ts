import { Transaction, type TransactionInstruction } from '@solana/web3.js';
import type { AuthoritySigner } from '../authority-signer.js';
import { ed25519PublicKeyObject, verifiesEd25519 } from '../ed25519.js';

export interface SignedWire {
  wire: Uint8Array;
  signature: Uint8Array;
}

/**
 * A legacy transaction of `instructions`, paid and signed by the authority alone. The signature
 * is checked against the public key before the bytes leave, as web3.js's serialize() would: a
 * token that signs with another key than the one it showed at start fails here, not on chain.
 */
export async function signTransaction(
  signer: AuthoritySigner,
  instructions: readonly TransactionInstruction[],
  blockhash: string,
  lastValidBlockHeight: number,
): Promise<SignedWire> {
  const feePayer = signer.publicKey;
  const transaction = new Transaction({ feePayer, blockhash, lastValidBlockHeight }).add(...instructions);
  const message = transaction.serializeMessage();
  const signature = await signer.sign(message);
  if (!verifiesEd25519(ed25519PublicKeyObject(feePayer), message, signature)) {
    throw new Error('the ed25519 signature does not verify against the authority public key');
  }
  transaction.addSignature(feePayer, Buffer.from(signature));
  return { wire: transaction.serialize({ verifySignatures: false }), signature };
}
