import { describe, expect, it } from 'vitest';
import {
  failedAttemptErrors,
  loggedSignatures,
  NOTHING_ATTEMPTED,
  runRound,
  startBridgeCrank,
  startBridgeCranks,
  type BridgeCrank,
} from './support/cranks.js';
import { depositTracker, landedStatus, landedTransactionsPaidBy, nextIndexOf, votersMask, withdrawTracker } from './support/chain-state.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { createRequestGate } from './support/request-gate.js';
import { claimAll, deposit, rawAckDeposit, resetPending, setTokenPair, type TokenPairSettings } from './support/transactions.js';
import { metricValue } from '../support/metric-value.js';

/**
 * Governance resets pending work while transfers are in flight (set_token_pair on the
 * destination, reset_pending on the source); the cranks plan from fresh reads, so they redo
 * what was reset and every transfer completes. Resets land between cycles, and also inside
 * a cycle, between a crank's read and its submission.
 */

// A sendTransaction latency above the crank's RPC timeout: the crank never sees its send answered.
// The timeout still leaves room for a governance transaction while a request of the crank is held.
const SHORT_RPC_TIMEOUT_MS = 400;
const SEND_LATENCY_MS = 700;

function normalPairSettings(b: DevnetBridge): TokenPairSettings {
  const normal = b.world.tokenPairs.normal;
  return { frozen: normal.frozen, limitRemaining: BigInt(normal.limitRemaining), vaultBalance: BigInt(normal.vaultBalance) };
}

/** Rounds of cycles (claiming as results appear) until every transfer is cleaned up; at most `maxRounds`. */
async function completeTransfers(b: DevnetBridge, cranks: readonly BridgeCrank[], maxRounds = 6): Promise<void> {
  for (let round = 0; round < maxRounds; round++) {
    const tracker = depositTracker(b);
    if (tracker.header.settledPrefix === tracker.header.entryCount) return;
    await runRound(cranks);
    await claimAll(b);
  }
  throw new Error(`transfers not settled after ${maxRounds} rounds`);
}

describe.concurrent('governance resets mid-flight', () => {
  it('set_token_pair while entries are Voting: entries removed, positions rewound, generation + 1; the cranks propose again', async ({
    onTestFinished,
  }) => {
    const bridge = await startDevnetBridge();
    onTestFinished(() => bridge.close());
    const cranks = await startBridgeCranks(bridge, [0, 1, 2]);
    const [a] = cranks;
    const mint = bridge.world.tokenPairs.normal.sourceMint;
    await deposit(bridge, { amount: 100n, sourceMint: mint });
    await runRound(cranks);
    await deposit(bridge, { amount: 200n, sourceMint: mint });
    await deposit(bridge, { amount: 300n, sourceMint: mint });
    expect(await a!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
    const before = withdrawTracker(bridge);
    expect(before.entries.map((entry) => entry.status)).toEqual(['Finalized', 'Voting', 'Voting']);
    expect(nextIndexOf(before, bridge, 0)).toBe(3);

    await setTokenPair(bridge, mint, normalPairSettings(bridge));
    const after = withdrawTracker(bridge);
    expect(after.header).toMatchObject({ entryCount: 1n, settledPrefix: 1n, generation: before.header.generation + 1n });
    expect([0, 1, 2].map((k) => nextIndexOf(after, bridge, k))).toEqual([1, 1, 1]);

    await completeTransfers(bridge, cranks);
    expect(withdrawTracker(bridge).entries.map((entry) => entry.amount)).toEqual([100n, 200n, 300n]);
    expectSettled(bridge, 3);
    await expectTransactionsAccounted(bridge, cranks);
  });

  it('reset_pending while entries are Relaying: back to Initialized, positions rewound, generation + 1; relayed again', async ({
    onTestFinished,
  }) => {
    const bridge = await startDevnetBridge();
    onTestFinished(() => bridge.close());
    const cranks = await startBridgeCranks(bridge, [0, 1, 2]);
    const frozen = bridge.world.tokenPairs.frozen.sourceMint;
    await deposit(bridge, { amount: 100n, sourceMint: frozen });
    await deposit(bridge, { amount: 200n, sourceMint: frozen });
    // Authority 2 sees the Rejected results finalized and proposes them to the source.
    await runRound(cranks);
    const before = depositTracker(bridge);
    expect(before.entries).toMatchObject([
      { status: 'Relaying', yesVotes: votersMask(2) },
      { status: 'Relaying', yesVotes: votersMask(2) },
    ]);

    await resetPending(bridge);
    const after = depositTracker(bridge);
    expect(after.entries).toMatchObject([
      { status: 'Initialized', yesVotes: 0, proposed: { kind: 'None' } },
      { status: 'Initialized', yesVotes: 0, proposed: { kind: 'None' } },
    ]);
    expect(after.header.generation).toBe(before.header.generation + 1n);
    expect([0, 1, 2].map((k) => nextIndexOf(after, bridge, k))).toEqual([0, 0, 0]);

    await completeTransfers(bridge, cranks);
    expectSettled(bridge, 2);
    expect(depositTracker(bridge).entries.map((entry) => entry.refundedAmount)).toEqual([100n, 200n]);
    await expectTransactionsAccounted(bridge, cranks);
  });

  it('set_token_pair between a crank’s read and its signing: the stale proposal is refused, re-planned and retried in the same cycle', async ({
    onTestFinished,
  }) => {
    const bridge = await startDevnetBridge();
    onTestFinished(() => bridge.close());
    const gate = createRequestGate();
    const a = startBridgeCrank(bridge, 0, { fetch: gate.fetch });
    const others = await startBridgeCranks(bridge, [1, 2]);
    await a.service.runOnce();
    const cranks = [a, ...others];
    const mint = bridge.world.tokenPairs.frozen.sourceMint;
    await deposit(bridge, { amount: 100n, sourceMint: mint });
    await deposit(bridge, { amount: 200n, sourceMint: mint });
    await a.service.runOnce();
    await deposit(bridge, { amount: 300n, sourceMint: mint });

    // Authority 0 reads (next_index 2) and plans to propose entry 2; the reset removes entries 0 and 1 before it signs.
    const held = gate.holdNext(bridge.pair.target.url, 'getLatestBlockhash');
    const cycle = a.service.runOnce();
    await held.reached;
    await setTokenPair(bridge, mint, { frozen: true, limitRemaining: 1_000_000n, vaultBalance: 1_000_000n });
    expect(withdrawTracker(bridge).header.entryCount).toBe(0n);
    expect(nextIndexOf(withdrawTracker(bridge), bridge, 0)).toBe(0);
    held.release();

    expect(await cycle).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
    expect(failedAttemptErrors(a)).toEqual([expect.stringMatching(/^ack_deposit on destination tracker .* failed: VoteOutOfOrder \(6001\)/)]);
    expect(await metricValue(a.metrics.crankRetries, { action: 'ack_deposit' })).toBe(1);
    expect(a.service.health()).toMatchObject({ last_error: null, last_action: 'ack_deposit 0..2 (3 votes)' });
    expect(withdrawTracker(bridge).entries).toMatchObject(
      [100n, 200n, 300n].map((amount) => ({ status: 'Voting', amount, yesVotes: votersMask(0) })),
    );

    await completeTransfers(bridge, cranks);
    expectSettled(bridge, 3);
    await expectTransactionsAccounted(bridge, cranks);
  });

  it('reset_pending between a crank’s read and its signing: the stale proposal is refused, re-planned and retried in the same cycle', async ({
    onTestFinished,
  }) => {
    const bridge = await startDevnetBridge();
    onTestFinished(() => bridge.close());
    const gate = createRequestGate();
    const a = startBridgeCrank(bridge, 0, { fetch: gate.fetch });
    const [b] = await startBridgeCranks(bridge, [1]);
    await a.service.runOnce();
    const honest = [a, b!];
    const mint = bridge.world.tokenPairs.frozen.sourceMint;
    await deposit(bridge, { amount: 100n, sourceMint: mint });
    await runRound(honest);
    // Authority 0 relays entry 0 alone: it stays Relaying until a second vote.
    await a.service.runOnce();
    expect(depositTracker(bridge).entries[0]).toMatchObject({ status: 'Relaying', yesVotes: votersMask(0) });
    await deposit(bridge, { amount: 200n, sourceMint: mint });
    await a.service.runOnce();
    // Authority 2, voting by hand (no crank), supplies the destination votes but no source ones.
    const [first, second] = depositTracker(bridge).entries;
    await rawAckDeposit(bridge, 2, { index: 0n, approve: true, amount: first!.amount, recipient: first!.recipient, sourceMint: mint });
    await rawAckDeposit(bridge, 2, { index: 1n, approve: true, amount: second!.amount, recipient: second!.recipient, sourceMint: mint });
    expect(withdrawTracker(bridge).entries[1]).toMatchObject({ status: 'Finalized' });

    // Authority 0 reads (next_index 1) and plans to propose entry 1; the reset rewinds it to entry 0 before it signs.
    const held = gate.holdNext(bridge.pair.source.url, 'getLatestBlockhash');
    const cycle = a.service.runOnce();
    await held.reached;
    await resetPending(bridge);
    expect(depositTracker(bridge).entries[0]).toMatchObject({ status: 'Initialized', yesVotes: 0 });
    expect(nextIndexOf(depositTracker(bridge), bridge, 0)).toBe(0);
    held.release();

    expect(await cycle).toEqual({ ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true });
    expect(failedAttemptErrors(a)).toEqual([expect.stringMatching(/^ack_withdraw on source tracker .* failed: VoteOutOfOrder \(6001\)/)]);
    expect(await metricValue(a.metrics.crankRetries, { action: 'ack_withdraw' })).toBe(1);
    expect(a.service.health()).toMatchObject({ last_error: null, last_action: 'ack_withdraw 0..1 (2 votes)' });
    expect(depositTracker(bridge).entries).toMatchObject([0, 1].map(() => ({ status: 'Relaying', yesVotes: votersMask(0) })));

    await completeTransfers(bridge, honest);
    expectSettled(bridge, 2, [0, 1]);
    await expectTransactionsAccounted(bridge, honest);
  });

  it('a stale vote whose first send went unanswered lands as a failure when rebroadcast: retried from a fresh plan, its fee counted', async ({
    onTestFinished,
  }) => {
    const bridge = await startDevnetBridge();
    onTestFinished(() => bridge.close());
    const gate = createRequestGate();
    const a = startBridgeCrank(bridge, 0, { fetch: gate.fetch, rpcTimeoutMs: SHORT_RPC_TIMEOUT_MS });
    const others = await startBridgeCranks(bridge, [1, 2]);
    await a.service.runOnce();
    const cranks = [a, ...others];
    const mint = bridge.world.tokenPairs.frozen.sourceMint;
    await deposit(bridge, { amount: 100n, sourceMint: mint });
    await a.service.runOnce();
    await deposit(bridge, { amount: 200n, sourceMint: mint });

    // Authority 0 reads (next_index 1) and plans to propose entry 1; the reset rewinds it to 0 before it signs.
    const held = gate.holdNext(bridge.pair.target.url, 'getLatestBlockhash');
    const cycle = a.service.runOnce();
    await held.reached;
    await setTokenPair(bridge, mint, { frozen: true, limitRemaining: 1_000_000n, vaultBalance: 1_000_000n });
    bridge.pair.target.faults.set({ methods: { sendTransaction: { latencyMs: SEND_LATENCY_MS } } });
    held.release();
    // Unanswered in time, the send is refused in preflight (VoteOutOfOrder); a rebroadcast, without preflight, lands and fails.
    expect(await cycle).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
    bridge.pair.target.faults.clear();
    expect(failedAttemptErrors(a)).toEqual([expect.stringMatching(/VoteOutOfOrder \(6001\), landed in transaction \w+ at index 1$/)]);
    const failedLanded = loggedSignatures(a).filter((signature) => landedStatus(bridge, signature)?.err !== null);
    expect(failedLanded.map((signature) => landedStatus(bridge, signature)?.err)).toEqual([{ InstructionError: [3, { Custom: 6001 }] }]); // after the three budget instructions
    expect(a.service.health()).toMatchObject({ last_error: null, last_action: 'ack_deposit 0..1 (2 votes)' });
    expect(a.service.health().total_actions_submitted).toBe(landedTransactionsPaidBy(bridge, 0, a.startBalances));

    await completeTransfers(bridge, cranks);
    expectSettled(bridge, 2);
    await expectTransactionsAccounted(bridge, cranks, { 0: 1 });
  });
});
