import { chainBounds } from '../../src/chain/client/chain-bounds.js';
import { afterEach, describe, expect, it } from 'vitest';
import { worstCaseCycleMs } from '../../src/machines/delays.js';
import type { FaultSettings } from '../../devnet/faults/settings.js';
import { depositTracker, landedStatus, landedTransactionsPaidBy, nextIndexOf, votersMask, withdrawTracker } from './support/chain-state.js';
import {
  banksCaughtUp,
  failedAttemptErrors,
  loggedSignatures,
  NOTHING_ATTEMPTED,
  runRound,
  startBridgeCrank,
  startBridgeCranks,
  type BridgeCrank,
} from './support/cranks.js';
import { createRequestGate } from './support/request-gate.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { cleanupDeposit, deposit } from './support/transactions.js';
import { metricValue } from '../support/metric-value.js';
import { depositRejected, settleWithin } from './support/settle.js';

/**
 * RPC faults injected by the devnet: HTTP 500 and 429, node-unhealthy errors, lost
 * sendTransaction responses, random failures. The cranks retry within the attempt limit,
 * report exhausted actions in last_error until a clean cycle, and never land a vote twice:
 * every authority paid for exactly the transactions its crank counted.
 */

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

describe('RPC faults', () => {
  describe('with production confirmation timing (a blockhash lives 151 slots of 10 ms)', () => {
    const SLOT_MS = 10;
    const settings = { maxAttempts: 2, retryBackoffMs: 20, rpcTimeoutMs: 2_000 };
    const blockhashLifetimeMs = 151 * SLOT_MS;

    /** One cycle of crank `a` while every send fails as `fault` says: it ends within the bound, each attempt at its blockhash's expiry. */
    async function cycleWhileSendsFail(fault: FaultSettings, sends: RegExp): Promise<BridgeCrank[]> {
      bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
      const cranks = await startBridgeCranks(bridge, [0, 1, 2], { ...settings, productionTiming: true });
      const a = cranks[0]!;
      await depositRejected(bridge, 3);
      bridge.pair.target.faults.set(fault);
      const started = Date.now();
      expect(await a.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
      const elapsedMs = Date.now() - started;
      // Each attempt waited for its blockhash to expire; none re-signed inside the attempt.
      expect(elapsedMs).toBeGreaterThan(settings.maxAttempts * blockhashLifetimeMs);
      expect(elapsedMs).toBeLessThan(worstCaseCycleMs(settings, chainBounds({ ...settings, blockhashLifetimeMs })));
      const expiries = a.logs.records().filter((record) => record.level === 'warn' && String(record.msg).startsWith('blockhash expired before the transaction landed'));
      expect(expiries).toHaveLength(settings.maxAttempts);
      const health = a.service.health();
      expect(health.last_error).toMatch(
        new RegExp(`^ack_deposit 0\\.\\.2 \\(3 votes\\) failed after 2 attempts: .*not landed: its blockhash expired \\(block height past \\d+\\); ${sends.source}; priority fee offered \\d+ micro-lamports/CU`),
      );
      expect(a.service.status()).toBe('degraded');
      expect(a.logs.records()).toContainEqual(expect.objectContaining({ level: 'error', msg: 'crank: ack_deposit failed, moving on to the next action' }));
      bridge.pair.target.faults.clear();
      return cranks;
    }

    it('every send failing with HTTP 500: bounded, named in last_error with the endpoint, then every transfer completes', async () => {
      const cranks = await cycleWhileSendsFail(
        { methods: { sendTransaction: { errorRate: 1, errorKind: 'http500' } } },
        /sendTransaction on the destination chain failed every time \(\d+ sends?; last: HTTP 500 from http:\/\/127\.0\.0\.1:\d+\)/,
      );
      await settleWithin(bridge!, cranks, 6);
      expectSettled(bridge!, 3);
      await expectTransactionsAccounted(bridge!, cranks);
      expect(cranks[0]!.service.status()).toBe('ok');
    });

    it('every send dropped (accepted, never landed): bounded and named as dropped, then every transfer completes', async () => {
      const cranks = await cycleWhileSendsFail(
        { dropTransactions: 1_000_000 },
        /the destination chain's RPC accepted it (\d+) of \1 sends? but it never landed \(dropped before a leader included it\)/,
      );
      await settleWithin(bridge!, cranks, 6);
      expectSettled(bridge!, 3);
      await expectTransactionsAccounted(bridge!, cranks);
    });
  });

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

  it('blocks paused past the confirmation timeout: the vote stays pending, lands once on resume, and is never signed again', async () => {
    bridge = await startDevnetBridge();
    const [a] = await startBridgeCranks(bridge, [0], { maxAttempts: 2, retryBackoffMs: 20, confirmTimeoutMs: 300 });
    const [b, c] = await startBridgeCranks(bridge, [1, 2]);
    const cranks = [a!, b!, c!];
    await depositRejected(bridge, 2);

    bridge.pair.target.pause();
    expect(await a!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
    expect(a!.service.health().last_error).toMatch(/^ack_deposit 0\.\.1 \(2 votes\) failed after 2 attempts: .*not confirmed within 1 s/);
    expect(withdrawTracker(bridge).header.entryCount).toBe(0n);

    bridge.pair.target.resume();
    expect(withdrawTracker(bridge).entries).toMatchObject([{ yesVotes: votersMask(0) }, { yesVotes: votersMask(0) }]);
    // On Agave's banks the pause held the confirmed bank too: the vote is landed once a status says confirmed.
    await banksCaughtUp(bridge);
    expect(await a!.service.runOnce()).toEqual(NOTHING_ATTEMPTED);
    expect(a!.service.health().last_error).toBeNull();

    // The next ack_deposit call of authority 0 resolves the pending transaction first: it counts it, and sends only the new vote.
    await depositRejected(bridge, 1);
    expect(await a!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
    expect(nextIndexOf(withdrawTracker(bridge), bridge, 0)).toBe(3);

    await settleWithin(bridge, cranks, 3);
    expectSettled(bridge, 3);
    await expectTransactionsAccounted(bridge, cranks);
  });

  it('a cleanup that loses the race to someone else’s lands with CleanupAlreadyCompleted: counted as already done, and as landed', async () => {
    bridge = await startDevnetBridge();
    const gate = createRequestGate();
    // A timeout shorter than the latency set below: authority 0 never sees its sendTransaction answered.
    const a = startBridgeCrank(bridge, 0, { fetch: gate.fetch, rpcTimeoutMs: 400 });
    await a.service.runOnce();
    const [b, c] = await startBridgeCranks(bridge, [1, 2]);
    const cranks = [a, b!, c!];
    await depositRejected(bridge, 1);
    await runRound(cranks);
    // Authority 0's yes finalizes entry 0 on the source; only its cleanup is left.
    expect(await a.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true });

    // The source is read at finalized: entry 0's Finalized status must reach that bank before a cycle sees the cleanup to do.
    await banksCaughtUp(bridge);
    // Authority 0 reads entry 0 not cleaned up and is about to sign; the user cleans it up first (rule 3.2: anyone may).
    const held = gate.holdNext(bridge.pair.source.url, 'getLatestBlockhash');
    const racing = a.service.runOnce();
    await held.reached;
    await cleanupDeposit(bridge, 0);
    bridge.pair.source.faults.set({ methods: { sendTransaction: { latencyMs: 700 } } });
    held.release();
    // Unanswered in time, the send is refused in preflight; a rebroadcast, without preflight, lands and fails.
    expect(await racing).toEqual({ ...NOTHING_ATTEMPTED, cleanup_attempted: 1, cleanup_completed: 1 });
    bridge.pair.source.faults.clear();
    expect(failedAttemptErrors(a)).toEqual([]);
    const failedLanded = loggedSignatures(a).filter((signature) => landedStatus(bridge!, signature)?.err !== null);
    expect(failedLanded.map((signature) => landedStatus(bridge!, signature)?.err)).toEqual([{ InstructionError: [3, { Custom: 6006 }] }]); // after the three budget instructions
    expect(a.service.health()).toMatchObject({ last_error: null, last_action: 'cleanup_deposit 1 entry (1 already done)' });
    expect(a.service.health().total_actions_submitted).toBe(landedTransactionsPaidBy(bridge, 0, a.startBalances));

    await runRound(cranks);
    expectSettled(bridge, 1);
    await expectTransactionsAccounted(bridge, cranks, { 0: 1 });
  });

  it('random failures on every method of both chains: the transfers complete and every landed transaction is accounted for', async () => {
    bridge = await startDevnetBridge();
    const cranks = await startBridgeCranks(bridge, [0, 1, 2], { maxAttempts: 3, retryBackoffMs: 10 });
    for (let i = 0; i < 4; i++) await deposit(bridge, { amount: 600n + BigInt(i), sourceMint: bridge.world.tokenPairs.lowVault.sourceMint });
    await depositRejected(bridge, 4);

    const chaos = (seed: number): FaultSettings => ({
      seed,
      methods: {
        '*': { errorRate: 0.08, errorKind: 'http500' },
        getAccountInfo: { errorRate: 0.05, errorKind: 'http429', retryAfterSecs: 0 },
        getMultipleAccounts: { errorRate: 0.05, errorKind: 'http429', retryAfterSecs: 0 },
        sendTransaction: { errorRate: 0.15, errorKind: 'rpc' },
      },
      loseResponses: 2,
    });
    bridge.pair.source.faults.set(chaos(11));
    bridge.pair.target.faults.set(chaos(22));
    await settleWithin(bridge, cranks, 40);
    bridge.pair.source.faults.clear();
    bridge.pair.target.faults.clear();
    await runRound(cranks);

    expectSettled(bridge, 8);
    for (const crank of cranks) {
      expect(crank.service.health().last_error).toBeNull();
      expect(nextIndexOf(withdrawTracker(bridge), bridge, crank.slot)).toBe(8);
    }
    await expectTransactionsAccounted(bridge, cranks);
  });
});
