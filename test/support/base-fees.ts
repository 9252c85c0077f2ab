import type { PublicKey } from '@solana/web3.js';
import { LAMPORTS_PER_SIGNATURE } from '../../devnet/bank/bank.js';
import { parseTransaction } from '../../devnet/bank/transaction.js';
import type { ChainPair } from '../../devnet/chain-pair.js';

/** An account's lamports on both chains of a devnet pair at one moment. */
export interface PairLamports {
  source: bigint;
  target: bigint;
}

export function pairLamports(pair: ChainPair, key: PublicKey | string): PairLamports {
  return { source: pair.source.getAccount(key)?.lamports ?? 0n, target: pair.target.getAccount(key)?.lamports ?? 0n };
}

/**
 * Base fees `key` paid on both chains since `since`: what it spent less the priority fees the
 * devnet recorded for it (price x requested limit; none before its crank starts), in units of
 * LAMPORTS_PER_SIGNATURE. The devnet charges landed transactions alone, failed or not, so this
 * counts the transactions it landed with `key` as fee payer (one signature each).
 */
export function baseFeesPaid(pair: ChainPair, key: PublicKey | string, since: PairLamports): number {
  const now = pairLamports(pair, key);
  const priority = pair.source.feesPaid(key).priority + pair.target.feesPaid(key).priority;
  const spent = since.source - now.source + (since.target - now.target) - priority;
  if (spent % BigInt(LAMPORTS_PER_SIGNATURE) !== 0n)
    throw new Error(`${key.toString()} spent ${spent} lamports besides priority fees: not a whole number of base fees`);
  return Number(spent / BigInt(LAMPORTS_PER_SIGNATURE));
}

/** A transaction a devnet chain landed (the last 10,000 kept), by its first signature. */
export interface PaidTransaction {
  chain: 'source' | 'target';
  signature: string;
  slot: number;
  err: unknown;
  logMessages: string[];
  /** The transaction as it was sent. */
  wire: Uint8Array;
}

/** The transactions the pair's chains landed with `key` as fee payer, failed or not, oldest first per chain. */
export function landedTransactionsOf(pair: ChainPair, key: PublicKey | string): PaidTransaction[] {
  const payer = key.toString();
  return (['source', 'target'] as const).flatMap((chain) =>
    [...pair[chain].bank.landedTransactions()]
      .filter((landed) => landed.feePayer === payer)
      .map(({ wire, slot, err, logMessages }) => ({ chain, signature: parseTransaction(wire).signature, slot, err, logMessages, wire })),
  );
}
