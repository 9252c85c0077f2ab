import { afterEach, describe, expect, it } from 'vitest';
import { startCrankServer } from './support/crank-server.js';
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
 * (151 slots of 10 ms) and the next attempt signs anew with a higher bid. (A steady and a
 * sudden floor: congestion.test.ts, which runs beside this file.)
 */

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

describe('congestion: votes land on a chain that orders by priority fee', () => {
  it('a floor above the cap: nothing is spent above the cap, the action fails after its attempts and /health names the fee', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    const [a] = await startBridgeCranks(bridge, [0], settings);
    await depositRejected(bridge, 2);
    setFloor(bridge, { priceFloor: 150_000 });
    await slotsPass(bridge, 150);
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
