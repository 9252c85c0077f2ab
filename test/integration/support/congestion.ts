import { expect } from 'vitest';
import type { BridgeCrank } from './cranks.js';
import type { DevnetBridge } from './devnet-bridge.js';
import { metricValue } from '../../support/metric-value.js';
import { waitFor } from '../../support/wait-for.js';

/**
 * What test/integration/congestion.test.ts and congestion-limits.test.ts share: a congested
 * cluster at 10 ms slots (a blockhash lives 151 of them, 1.5 s), cranks with production
 * confirmation timing and a priority-fee cap, and what they check of the fees and limits.
 */

export const SLOT_MS = 10;
export const CAP = 100_000;
export const settings = {
  maxAttempts: 3,
  retryBackoffMs: 20,
  rpcTimeoutMs: 2_000,
  productionTiming: true,
  priorityFee: { minMicroLamports: 0, maxMicroLamports: CAP },
};

/** Every crank transaction landed within its limit, requesting at most 1.2x what it used. */
export function expectMeasuredLimits(landed: ReturnType<typeof crankTransactions>): void {
  for (const transaction of landed) {
    expect(transaction.computeUnitsConsumed).toBeLessThanOrEqual(transaction.computeUnitLimit);
    expect(transaction.computeUnitLimit).toBeLessThanOrEqual(1.2 * transaction.computeUnitsConsumed);
  }
}

/** Actions given up after all their attempts, by any crank. */
export function exhaustedActions(cranks: readonly BridgeCrank[]): unknown[] {
  return cranks.flatMap((crank) =>
    crank.logs.records().filter((record) => record.level === 'error' && String(record.msg).endsWith('moving on to the next action')),
  );
}

/** The crank transactions each chain landed, paid by the authorities. */
export function crankTransactions(b: DevnetBridge) {
  const payers = new Set(b.authorities.map((authority) => authority.publicKey.toBase58()));
  return [b.pair.source, b.pair.target].flatMap((node) => [...node.bank.landedTransactions()].filter((landed) => payers.has(landed.feePayer)));
}

async function paidInMetrics(crank: BridgeCrank, kind: 'base' | 'priority'): Promise<bigint> {
  const source = await metricValue(crank.metrics.feesPaid, { chain: 'source', kind });
  const target = await metricValue(crank.metrics.feesPaid, { chain: 'target', kind });
  return BigInt(source + target);
}

/** What the chains charged each authority equals what its metrics recorded. */
export async function expectFeesRecorded(b: DevnetBridge, cranks: readonly BridgeCrank[]): Promise<void> {
  for (const crank of cranks) {
    const key = b.authorities[crank.slot]!.publicKey;
    const charged = [b.pair.source.feesPaid(key), b.pair.target.feesPaid(key)];
    expect(await paidInMetrics(crank, 'base'), `authority ${crank.slot}: base fees`).toBe(charged[0]!.base + charged[1]!.base);
    expect(await paidInMetrics(crank, 'priority'), `authority ${crank.slot}: priority fees`).toBe(charged[0]!.priority + charged[1]!.priority);
  }
}

/**
 * Waits while `count` slots pass on both chains in real time (a whole fee history at a new
 * floor): a jump made by hand is more slots than the elapsed time allows, and the server refuses
 * an endpoint that answers at such a slot. Bounded at twice their length, plus 2 s.
 */
export async function slotsPass(b: DevnetBridge, count: number): Promise<void> {
  const from = { source: b.pair.source.bank.slot, target: b.pair.target.bank.slot };
  await waitFor(() => b.pair.source.bank.slot >= from.source + count && b.pair.target.bank.slot >= from.target + count, {
    timeoutMs: 2 * count * SLOT_MS + 2_000,
    what: `${count} slots passing on both chains`,
  });
}

export function setFloor(b: DevnetBridge, faults: { priceFloor?: number; freezeFeeHistory?: boolean }): void {
  b.pair.source.faults.set(faults);
  b.pair.target.faults.set(faults);
}
