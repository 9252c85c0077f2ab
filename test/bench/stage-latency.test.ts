import { afterEach, describe, expect, it } from 'vitest';
import { StageClock, STAGES } from '../../bench/support/stage-latency.js';
import { runRound, startBridgeCranks } from '../integration/support/cranks.js';
import { depositTracker } from '../integration/support/chain-state.js';
import { startDevnetBridge, type DevnetBridge } from '../integration/support/devnet-bridge.js';
import { deposit } from '../integration/support/transactions.js';

/**
 * The stage clock of the soak and the latency bench over a real devnet: it times only the
 * deposits made after it started, stamps each stage once, in order, and reports a transfer once
 * it is cleaned up.
 */

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

describe('StageClock', () => {
  it('times each transfer deposited after it started through every stage, in order', async () => {
    bridge = await startDevnetBridge();
    const frozen = bridge.world.tokenPairs.frozen.sourceMint;
    await deposit(bridge, { amount: 1n, sourceMint: frozen });
    const clock = new StageClock(bridge);
    const cranks = await startBridgeCranks(bridge, [0, 1, 2]);
    let now = 0;
    for (const amount of [2n, 3n]) await deposit(bridge, { amount, sourceMint: frozen });
    clock.sample((now += 1000));
    for (let round = 0; round < 6 && depositTracker(bridge).header.settledPrefix < 3n; round++) {
      await runRound(cranks);
      clock.sample((now += 1000));
    }
    expect(depositTracker(bridge).header.settledPrefix).toBe(3n);
    const latencies = clock.latencies();
    for (const stage of STAGES) expect(latencies[stage].transfers, stage).toBe(2);
    const p99s = STAGES.map((stage) => latencies[stage].p99);
    expect(p99s[0]).toBeGreaterThan(0);
    expect([...p99s].sort((a, b) => a - b)).toEqual(p99s);
    expect(latencies.cleanup.max).toBeGreaterThan(latencies.ack_deposit.p50);
  });
});
