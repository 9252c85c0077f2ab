import { randomBytes } from 'node:crypto';
import { Keypair, PublicKey, SystemProgram, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { AddressSignature, LandedTransaction } from '../bank/history.js';

/** Forged entries list above every transaction that landed in their slot. */
const AFTER_THE_SLOT_S_OWN = Number.MAX_SAFE_INTEGER;

/**
 * A lying history node (issue 31's security review): transactions that never landed, listed for
 * an address as if it had signed them. Each is a System transfer of 1 lamport with the address
 * as fee payer and a random signature, so only a reader that verifies a signature against its
 * message can tell.
 */

export interface ForgedHistory {
  address: string;
  /** Newest first, as getSignaturesForAddress lists them. */
  entries: AddressSignature[];
  transactions: Map<string, LandedTransaction>;
}

export function forgeHistory(address: string, count: number, slot: number, blockhash: string): ForgedHistory {
  const entries: AddressSignature[] = [];
  const transactions = new Map<string, LandedTransaction>();
  const blockTime = Math.floor(Date.now() / 1000);
  for (let i = 0; i < count; i += 1) {
    const message = new TransactionMessage({
      payerKey: new PublicKey(address),
      recentBlockhash: blockhash,
      instructions: [SystemProgram.transfer({ fromPubkey: new PublicKey(address), toPubkey: Keypair.generate().publicKey, lamports: 1 })],
    }).compileToLegacyMessage();
    const signature = randomBytes(64);
    const wire = new VersionedTransaction(message, [signature]).serialize();
    const id = bs58.encode(signature);
    entries.push({ signature: id, slot, seq: AFTER_THE_SLOT_S_OWN, err: null, blockTime });
    transactions.set(id, {
      slot,
      blockTime,
      err: null,
      feePayer: address,
      fee: 5_000n,
      priorityFee: 0n,
      computeUnitLimit: 3_000,
      computeUnitPrice: 0n,
      computeUnitsConsumed: 150,
      logMessages: [`Program ${SystemProgram.programId.toBase58()} invoke [1]`, `Program ${SystemProgram.programId.toBase58()} success`],
      wire,
      version: 'legacy',
    });
  }
  return { address, entries, transactions };
}
