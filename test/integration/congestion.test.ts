import { afterEach, describe, expect, it } from 'vitest';
import { startCrankServer } from './support/crank-server.js';
import { startBridgeCranks, type BridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled } from './support/expectations.js';
import { metricValue } from '../support/metric-value.js';
import { depositRejected, settleWithin } from './support/settle.js';

/**
 * A congested cluster (PROTOCOL.md "Compute units and fees", the devnet's price floor): leaders
 * include transactions by priority fee, every transaction runs under its compute-unit limit, and
 * a program upgrade changes what an instruction costs. The cranks run with production
 * confirmation timing, so a transaction priced too low lives until its blockhash expires
 * (151 slots of 10 ms) and the next attempt signs anew with a higher bid.
 */

const SLOT_MS = 10;
const CAP = 100_000;
const settings = { maxAttempts: 3, retryBackoffMs: 20, rpcTimeoutMs: 2_000, productionTiming: true, priorityFee: { minMicroLamports: 0, maxMicroLamports: CAP } };

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

/** Every crank transaction landed within its limit, requesting at most 1.2x what it used. */
function expectMeasuredLimits(landed: ReturnType<typeof crankTransactions>): void {
  for (const transaction of landed) {
    expect(transaction.computeUnitsConsumed).toBeLessThanOrEqual(transaction.computeUnitLimit);
    expect(transaction.computeUnitLimit).toBeLessThanOrEqual(1.2 * transaction.computeUnitsConsumed);
  }
}

/** Actions given up after all their attempts, by any crank. */
function exhaustedActions(cranks: readonly BridgeCrank[]): unknown[] {
  return cranks.flatMap((crank) => crank.logs.records().filter((record) => record.level === 'error' && String(record.msg).endsWith('moving on to the next action')));
}

/** The crank transactions each chain landed, paid by the authorities. */
function crankTransactions(b: DevnetBridge) {
  const payers = new Set(b.authorities.map((authority) => authority.publicKey.toBase58()));
  return [b.pair.source, b.pair.target].flatMap((node) => [...node.bank.landedTransactions()].filter((landed) => payers.has(landed.feePayer)));
}

async function paidInMetrics(crank: BridgeCrank, kind: 'base' | 'priority'): Promise<bigint> {
  const source = await metricValue(crank.metrics.feesPaid, { chain: 'source', kind });
  const target = await metricValue(crank.metrics.feesPaid, { chain: 'target', kind });
  return BigInt(source + target);
}

/** What the chains charged each authority equals what its metrics recorded. */
async function expectFeesRecorded(b: DevnetBridge, cranks: readonly BridgeCrank[]): Promise<void> {
  for (const crank of cranks) {
    const key = b.authorities[crank.slot]!.publicKey;
    const charged = [b.pair.source.feesPaid(key), b.pair.target.feesPaid(key)];
    expect(await paidInMetrics(crank, 'base'), `authority ${crank.slot}: base fees`).toBe(charged[0]!.base + charged[1]!.base);
    expect(await paidInMetrics(crank, 'priority'), `authority ${crank.slot}: priority fees`).toBe(charged[0]!.priority + charged[1]!.priority);
  }
}

function setFloor(b: DevnetBridge, faults: { priceFloor?: number; freezeFeeHistory?: boolean }): void {
  b.pair.source.faults.set(faults);
  b.pair.target.faults.set(faults);
}

describe('congestion: votes land on a chain that orders by priority fee', () => {
  it('a steady floor of 20,000 (the history shows it): every transfer done at the first bid, nothing expired, fees as charged', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    const cranks = await startBridgeCranks(bridge, [0, 1, 2], settings);
    await depositRejected(bridge, 4);
    setFloor(bridge, { priceFloor: 20_000 });
    // A whole history (150 slots) at the floor before the cranks look: a steady congestion.
    bridge.pair.source.advanceSlots(150);
    bridge.pair.target.advanceSlots(150);
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

  it('a floor above the cap: nothing is spent above the cap, the action fails after its attempts and /health names the fee', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    const [a] = await startBridgeCranks(bridge, [0], settings);
    await depositRejected(bridge, 2);
    setFloor(bridge, { priceFloor: 150_000 });
    bridge.pair.target.advanceSlots(150);
    const url = await startCrankServer(bridge, a!);
    await a!.service.runOnce();
    const response = await fetch(`${url}/health`);
    const health = (await response.json()) as { status: string; crank: { last_error: string | null } };
    expect(health.status).toBe('degraded');
    expect(health.crank.last_error).toMatch(
      new RegExp(
        '^ack_deposit 0\\.\\.1 \\(2 votes\\) failed after 3 attempts: .*not landed: its blockhash expired .*; priority fee offered 100000 micro-lamports/CU ' +
          'at escalation step 2 of 3 \\(each expiry on this chain raises it\\); recent slots cleared 150000 \\(p75\\) to 150000 \\(max\\); the cap \\(BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS\\) is 100000: ' +
          'the going price is above the cap; raise the cap or wait for the congestion to pass$',
      ),
    );
    expect(bridge.pair.target.feesPaid(bridge.authorities[0]!.publicKey).total).toBe(0n);
    expect(await metricValue(a!.metrics.priorityFee, { chain: 'target' })).toBe(CAP);
    // The congestion passes: the next cycle lands at the going price.
    setFloor(bridge, { priceFloor: 0 });
    await a!.service.runOnce();
    expect(a!.service.health().last_error).toBeNull();
  });

  it('the program at 6x its compute cost: every transfer done, no transaction over its limit, each requesting at most 1.2x what it used', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    bridge.pair.source.setComputeCostScale(6);
    bridge.pair.target.setComputeCostScale(6);
    const cranks = await startBridgeCranks(bridge, [0, 1, 2], settings);
    await depositRejected(bridge, 30);
    await settleWithin(bridge, cranks, 8);
    expectSettled(bridge, 30);
    expect(exhaustedActions(cranks)).toEqual([]);
    const landed = crankTransactions(bridge);
    // 30 votes at 144,000 CU each cannot fit one 1,400,000-CU transaction.
    expect(landed.filter((transaction) => transaction.computeUnitsConsumed > 1_000_000).length).toBeGreaterThan(0);
    for (const transaction of landed) expect(transaction.err).toBeNull();
    expectMeasuredLimits(landed);
    await expectFeesRecorded(bridge, cranks);
  });
});
