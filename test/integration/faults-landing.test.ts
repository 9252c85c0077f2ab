import { afterEach, describe, expect, it } from 'vitest';
import type { FaultSettings } from '../../devnet/faults/settings.js';
import { landedStatus, landedTransactionsPaidBy, nextIndexOf, votersMask, withdrawTracker } from './support/chain-state.js';
import {
  banksCaughtUp,
  failedAttemptErrors,
  loggedSignatures,
  NOTHING_ATTEMPTED,
  runRound,
  startBridgeCrank,
  startBridgeCranks,
} from './support/cranks.js';
import { createRequestGate } from './support/request-gate.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { cleanupDeposit, deposit } from './support/transactions.js';
import { depositRejected, settleWithin } from './support/settle.js';

/**
 * RPC faults injected by the devnet: blocks paused past the confirmation timeout, a cleanup
 * that loses its race, random failures on every method.
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
