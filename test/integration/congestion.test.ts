import { afterEach, describe, expect, it } from 'vitest';
import { startBridgeCranks } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled } from './support/expectations.js';
import { metricValue } from '../support/metric-value.js';
import { depositRejected, settleWithin } from './support/settle.js';
import {
  CAP,
  crankTransactions,
  exhaustedActions,
  expectFeesRecorded,
  expectMeasuredLimits,
  setFloor,
  slotsPass,
  settings,
  SLOT_MS,
} from './support/congestion.js';

/**
 * A congested cluster (PROTOCOL.md "Compute units and fees", the devnet's price floor): leaders
 * include transactions by priority fee, every transaction runs under its compute-unit limit, and
 * a program upgrade changes what an instruction costs. The cranks run with production
 * confirmation timing, so a transaction priced too low lives until its blockhash expires
 * (151 slots of 10 ms) and the next attempt signs anew with a higher bid. (A floor above the
 * cap and a costlier program: congestion-limits.test.ts, which runs beside this file.)
 */

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

describe('congestion: votes land on a chain that orders by priority fee', () => {
  it('a steady floor of 20,000 (the history shows it): every transfer done at the first bid, nothing expired, fees as charged', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    const cranks = await startBridgeCranks(bridge, [0, 1, 2], settings);
    await depositRejected(bridge, 4);
    setFloor(bridge, { priceFloor: 20_000 });
    // A whole history (150 slots) at the floor before the cranks look: a steady congestion.
    await slotsPass(bridge, 150);
    await settleWithin(bridge, cranks, 6);
    expectSettled(bridge, 4);
    expect(exhaustedActions(cranks)).toEqual([]);
    for (const crank of cranks) expect(await metricValue(crank.metrics.transactionResigns, {})).toBe(0);
    const landed = crankTransactions(bridge);
    expect(landed.length).toBeGreaterThan(0);
    for (const transaction of landed) {
      expect(transaction.err).toBeNull();
      expect(transaction.computeUnitPrice).toBeGreaterThanOrEqual(20_000n);
      expect(transaction.computeUnitPrice).toBeLessThanOrEqual(BigInt(CAP));
    }
    expectMeasuredLimits(landed);
    await expectFeesRecorded(bridge, cranks);
  });

  it('a sudden floor of 20,000 the history has not seen (still 0): each expiry raises the bid, every transfer done within the attempts', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    const cranks = await startBridgeCranks(bridge, [0, 1, 2], settings);
    await depositRejected(bridge, 3);
    setFloor(bridge, { freezeFeeHistory: true });
    setFloor(bridge, { priceFloor: 20_000 });
    await settleWithin(bridge, cranks, 6);
    expectSettled(bridge, 3);
    expect(exhaustedActions(cranks)).toEqual([]);
    // The first bid (0, the frozen history) expired; the next one (cap / 4) landed.
    expect(await metricValue(cranks[0]!.metrics.transactionResigns, { chain: 'target' })).toBeGreaterThanOrEqual(1);
    for (const transaction of crankTransactions(bridge)) {
      expect(transaction.computeUnitPrice).toBeGreaterThanOrEqual(20_000n);
      expect(transaction.computeUnitPrice).toBeLessThanOrEqual(BigInt(CAP));
    }
    await expectFeesRecorded(bridge, cranks);
  });
});
