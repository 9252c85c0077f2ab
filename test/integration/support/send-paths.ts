import type { DevnetBridge } from './devnet-bridge.js';
import type { CrankTuning } from './cranks.js';

/**
 * The send-only path scenarios' shared settings (send-paths.test.ts, send-paths-accounting.test.ts):
 * 10 ms slots, the priority fee capped at CAP, three attempts, and the cranks' own transactions.
 */

export const SLOT_MS = 10;
export const CAP = 100_000;

const payersOf = (b: DevnetBridge) => new Set(b.authorities.map((authority) => authority.publicKey.toBase58()));

/** What the chain landed with an authority as fee payer, on one side. */
export function crankTransactionsOn(b: DevnetBridge, side: 'source' | 'target') {
  const payers = payersOf(b);
  return [...b.pair[side].bank.landedTransactions()].filter((landed) => payers.has(landed.feePayer));
}

export const crankTransactions = (b: DevnetBridge) => [...crankTransactionsOn(b, 'source'), ...crankTransactionsOn(b, 'target')];

export const tuning = (config: CrankTuning['config'] = {}): CrankTuning => ({
  maxAttempts: 3,
  confirmTimeoutMs: 20_000,
  priorityFee: { minMicroLamports: 0, maxMicroLamports: CAP },
  config,
});
