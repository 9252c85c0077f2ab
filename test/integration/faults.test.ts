import { afterEach, describe, expect, it } from 'vitest';
import type { FaultSettings } from '../../devnet/faults/settings.js';
import { depositTracker, votersMask, withdrawTracker } from './support/chain-state.js';
import { failedAttemptErrors, NOTHING_ATTEMPTED, startBridgeCranks } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { metricValue } from '../support/metric-value.js';
import { depositRejected, settleWithin } from './support/settle.js';

/**
 * RPC faults injected by the devnet: HTTP 500 and 429, node-unhealthy errors, lost
 * sendTransaction responses.
 * The cranks retry within the attempt limit, report exhausted actions in last_error until a
 * clean cycle, and never land a vote twice: every authority paid for exactly the transactions
 * its crank counted. (One file of three, which run side by side: faults-expiry.test.ts,
 * faults.test.ts, faults-landing.test.ts.)
 */

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

describe('RPC faults', () => {
  it('retries transient failures; last_error is set when the attempts run out and cleared by the next clean cycle', async () => {
    bridge = await startDevnetBridge();
    const cranks = await startBridgeCranks(bridge, [0, 1, 2], { maxAttempts: 3, retryBackoffMs: 20 });
    const [a, b, c] = cranks;
    const { source, target } = bridge.pair;
    await depositRejected(bridge, 3);

    // An HTTP 429 before signing: the read is retried inside the attempt; nothing is reported as an error.
    target.faults.set({ methods: { getLatestBlockhash: { http429: 1, retryAfterSecs: 0 } } });
    expect(await a!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
    expect(failedAttemptErrors(a!)).toEqual([]);
    expect(await metricValue(a!.metrics.rpcRetries, { chain: 'target', method: 'getLatestBlockhash' })).toBe(1);
    expect(a!.service.health()).toMatchObject({ last_error: null, last_action: 'ack_deposit 0..2 (3 votes)' });

    // The node refuses the transaction (-32005, unhealthy): nothing was broadcast; the retry lands it.
    target.faults.set({ methods: { getLatestBlockhash: {}, sendTransaction: { rpcErrors: 1 } } });
    expect(await b!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
    expect(failedAttemptErrors(b!)).toEqual([expect.stringContaining('-32005')]);
    expect(await metricValue(b!.metrics.crankRetries, { action: 'ack_deposit' })).toBe(1);
    expect(withdrawTracker(bridge).entries.map((entry) => entry.status)).toEqual(['Finalized', 'Finalized', 'Finalized']);

    // Every attempt fails (each of its 3 reads of a blockhash too): the error is recorded and the cycle goes on to ack_withdraw, which lands.
    target.faults.set({ methods: { sendTransaction: {}, getLatestBlockhash: { http500: 3 * 3 } } });
    expect(await c!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true, ack_withdraw_attempted: true });
    const failed = c!.service.health();
    expect(failed.last_error).toMatch(/^ack_deposit 0\.\.2 \(3 votes\) failed after 3 attempts: .*HTTP 500/);
    expect(failed).toMatchObject({ last_action: 'ack_withdraw 0..2 (3 votes)', total_actions_submitted: 1 });
    expect(failed.last_success_at).not.toBeNull();
    expect(await metricValue(c!.metrics.crankCycles, { outcome: 'error' })).toBe(1);
    expect(depositTracker(bridge).entries.map((entry) => entry.status)).toEqual(['Relaying', 'Relaying', 'Relaying']);

    // The next cycle runs without a failure and clears last_error.
    target.faults.clear();
    expect(await c!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
    expect(c!.service.health()).toMatchObject({ last_error: null, last_action: 'ack_deposit 0..2 (3 votes)' });

    // A read failing on all its 3 tries ends the cycle before anything is submitted; the next cycle is the retry.
    source.faults.set({ methods: { getAccountInfo: { errorRate: 1, errorKind: 'http500' } } });
    expect(await a!.service.runOnce()).toEqual(NOTHING_ATTEMPTED);
    expect(a!.service.health().last_error).toMatch(/^reading the trackers failed: .*HTTP 500/);
    source.faults.clear();
    expect(await a!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true });
    expect(a!.service.health().last_error).toBeNull();

    await settleWithin(bridge, cranks, 2);
    expectSettled(bridge, 3);
    await expectTransactionsAccounted(bridge, cranks);
  });

  it('429 storms on the reads of both chains: every cycle succeeds, the retries are counted', async () => {
    bridge = await startDevnetBridge();
    const cranks = await startBridgeCranks(bridge, [0, 1, 2], { maxAttempts: 3, retryBackoffMs: 20 });
    await depositRejected(bridge, 3);
    // Two of every three tries of each read answer 429 (a read makes three tries at most).
    const storm: FaultSettings = {
      seed: 5,
      methods: Object.fromEntries(
        ['getAccountInfo', 'getMultipleAccounts', 'getLatestBlockhash', 'getEpochInfo', 'getSignatureStatuses', 'getBalance'].map((method) => [
          method,
          { http429: 2, retryAfterSecs: 0 },
        ]),
      ),
    };
    for (let round = 0; round < 3; round++) {
      for (const crank of cranks) {
        bridge.pair.source.faults.set(storm);
        bridge.pair.target.faults.set(storm);
        await crank.service.runOnce();
        expect(crank.service.health().last_error).toBeNull();
      }
    }
    bridge.pair.source.faults.clear();
    bridge.pair.target.faults.clear();
    await settleWithin(bridge, cranks, 3);

    expectSettled(bridge, 3);
    for (const method of ['getAccountInfo', 'getMultipleAccounts']) {
      const retried = await Promise.all(cranks.map((crank) => metricValue(crank.metrics.rpcRetries, { chain: 'source', method })));
      expect(retried.every((count) => count >= 2 * 3)).toBe(true);
    }
    for (const crank of cranks) expect(failedAttemptErrors(crank)).toEqual([]);
    await expectTransactionsAccounted(bridge, cranks);
  });

  it('lost and unanswered sendTransaction responses: every vote lands once and is counted once', async () => {
    bridge = await startDevnetBridge();
    const cranks = await startBridgeCranks(bridge, [0, 1, 2]);
    const [a, b, c] = cranks;
    const { source, target } = bridge.pair;
    await depositRejected(bridge, 2);

    // Processed, then the answer is an HTTP 500: the crank cannot know it landed until it looks.
    target.faults.set({ loseResponses: 1, loseResponseMode: 'http500' });
    expect(await a!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
    expect(a!.service.health()).toMatchObject({ last_error: null, total_actions_submitted: 1 });
    expect(withdrawTracker(bridge).entries).toMatchObject([{ yesVotes: votersMask(0) }, { yesVotes: votersMask(0) }]);

    // Processed, then the connection is destroyed without an answer.
    target.faults.set({ loseResponses: 1, loseResponseMode: 'destroy' });
    expect(await b!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
    expect(b!.service.health()).toMatchObject({ last_error: null, total_actions_submitted: 1 });

    source.faults.set({ loseResponses: 1, loseResponseMode: 'destroy' });
    expect(await c!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true, ack_withdraw_attempted: true });
    expect(c!.service.health()).toMatchObject({ last_error: null, total_actions_submitted: 2 });

    // Not processed at all (HTTP 500 before the node looked at it): the same bytes are sent again.
    source.faults.set({ methods: { sendTransaction: { http500: 1 } } });
    expect(await a!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true });
    expect(await metricValue(a!.metrics.transactionRebroadcasts, { chain: 'source' })).toBeGreaterThanOrEqual(1);
    expect(a!.service.health()).toMatchObject({ last_error: null, total_actions_submitted: 2 });

    source.faults.clear();
    target.faults.clear();
    await settleWithin(bridge, cranks, 2);
    expectSettled(bridge, 2);
    const withdrawals = withdrawTracker(bridge);
    expect(withdrawals.entries.map((entry) => entry.yesVotes)).toEqual([votersMask(0, 1, 2), votersMask(0, 1, 2)]);
    expect(depositTracker(bridge).entries.map((entry) => entry.yesVotes)).toEqual([votersMask(0, 1, 2), votersMask(0, 1, 2)]);
    await expectTransactionsAccounted(bridge, cranks);
  });
});
