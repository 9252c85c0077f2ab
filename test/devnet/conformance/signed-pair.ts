import { TransactionMessage, VersionedTransaction, type Keypair, type TransactionInstruction } from '@solana/web3.js';
import type { DevnetRuntime } from './devnet-runtime.js';
import type { LiteSvmRuntime } from './litesvm-runtime.js';

/** LiteSVM's latest blockhash becomes the devnet's, so a nonce advanced on both takes the same value. */
export async function syncBlockhash(devnet: DevnetRuntime, litesvm: LiteSvmRuntime): Promise<string> {
  const { blockhash } = await devnet.latestBlockhash();
  litesvm.useBlockhash(blockhash);
  return blockhash;
}

/** A legacy transaction of `instructions`, paid and signed by `payer`: the bytes both runtimes are given. */
export function signedWire(payer: Keypair, instructions: TransactionInstruction[], recentBlockhash: string): Uint8Array {
  const message = new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash, instructions }).compileToLegacyMessage();
  const tx = new VersionedTransaction(message);
  tx.sign([payer]);
  return tx.serialize();
}
