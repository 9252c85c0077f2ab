import { afterEach, describe, expect, it } from 'vitest';
import type { DepositResult } from '../../src/chain/types.js';
import { depositTracker, nextIndexOf, votersMask, withdrawTracker } from './support/chain-state.js';
import { banksCaughtUp, NOTHING_ATTEMPTED, runRound, startBridgeCranks } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { claim, deposit, rawAckDeposit, rawAckWithdraw } from './support/transactions.js';

/**
 * Authority 2 is dishonest: no crank runs for it; it signs raw votes with wrong data. The two
 * honest cranks (authorities 0 and 1) vote its proposals down (a threshold no, rule 3.3),
 * then propose and finalize the right data, on both chains.
 */

const DISHONEST = 2;

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

describe('a dishonest authority', () => {
  it('proposes a wrong amount on the destination, then a wrong result on the source: both voted down and redone correctly', async () => {
    bridge = await startDevnetBridge();
    const honest = await startBridgeCranks(bridge, [0, 1]);
    const [a, b] = honest;
    const mint = bridge.world.tokenPairs.normal.sourceMint;
    await deposit(bridge, { amount: 800n, sourceMint: mint });
    const { recipient } = depositTracker(bridge).entries[0]!;

    await rawAckDeposit(bridge, DISHONEST, { index: 0n, approve: true, amount: 8_000n, recipient, sourceMint: mint });
    expect(withdrawTracker(bridge).entries[0]).toMatchObject({ status: 'Voting', amount: 8_000n, yesVotes: votersMask(DISHONEST) });

    expect(await a!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
    expect(withdrawTracker(bridge).entries[0]).toMatchObject({ status: 'Voting', noVotes: votersMask(0) });
    // The second no is a threshold no: the entry is removed and every position rewound to it.
    expect(await b!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
    const removed = withdrawTracker(bridge);
    expect(removed.header.entryCount).toBe(0n);
    expect([0, 1, DISHONEST].map((k) => nextIndexOf(removed, bridge!, k))).toEqual([0, 0, 0]);
    expect(removed.header.votes.map((vote) => vote.lastVote)).toEqual(['No', 'No', 'Yes']);

    // Re-proposed with the source entry's data, and finalized by the two honest votes.
    expect(await runRound(honest)).toEqual([
      { ...NOTHING_ATTEMPTED, ack_deposit_attempted: true },
      { ...NOTHING_ATTEMPTED, ack_deposit_attempted: true },
    ]);
    const confirmed: DepositResult = { kind: 'Confirmed', amount: 800n };
    expect(withdrawTracker(bridge).entries[0]).toMatchObject({
      status: 'Finalized',
      amount: 800n,
      result: confirmed,
      yesVotes: votersMask(0, 1),
      noVotes: 0,
    });
    await claim(bridge, 0);

    await rawAckWithdraw(bridge, DISHONEST, { index: 0, approve: true, result: { kind: 'Confirmed', amount: 799n } });
    expect(depositTracker(bridge).entries[0]).toMatchObject({ status: 'Relaying', proposed: { kind: 'Confirmed', amount: 799n } });

    // The source is read at finalized: each honest cycle waits until the banks hold the write before it.
    await banksCaughtUp(bridge);
    expect(await a!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true });
    expect(depositTracker(bridge).entries[0]).toMatchObject({ status: 'Relaying', noVotes: votersMask(0) });
    await banksCaughtUp(bridge);
    expect(await b!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true });
    const reset = depositTracker(bridge);
    expect(reset.entries[0]).toMatchObject({ status: 'Initialized', proposed: { kind: 'None' }, yesVotes: 0, noVotes: 0 });
    expect([0, 1, DISHONEST].map((k) => nextIndexOf(reset, bridge!, k))).toEqual([0, 0, 0]);
    await banksCaughtUp(bridge);

    expect(await runRound(honest)).toEqual([
      { ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true },
      { ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true },
    ]);
    expect(depositTracker(bridge).entries[0]).toMatchObject({ status: 'Finalized', result: confirmed, yesVotes: votersMask(0, 1) });
    // Authority 0 cleans up; authority 1, its read caught up with that cleanup, has nothing left to do.
    await banksCaughtUp(bridge);
    expect(await a!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, cleanup_attempted: 1, cleanup_completed: 1 });
    await banksCaughtUp(bridge);
    expect(await b!.service.runOnce()).toEqual(NOTHING_ATTEMPTED);

    expectSettled(bridge, 1, [0, 1]);
    expect(depositTracker(bridge).entries[0]!.refundedAmount).toBe(0n);
    for (const crank of honest) expect(crank.service.health().last_error).toBeNull();
    await expectTransactionsAccounted(bridge, honest);
  });

  it('fabricates a transfer the source never saw: no honest vote joins it; voted down once the real entry arrives', async () => {
    bridge = await startDevnetBridge();
    const honest = await startBridgeCranks(bridge, [0, 1]);
    const frozen = bridge.world.tokenPairs.frozen.sourceMint;
    await deposit(bridge, { amount: 100n, sourceMint: frozen });
    await runRound(honest);
    const real = depositTracker(bridge).entries[0]!;
    // The dishonest authority votes on entry 0 (its position), then proposes an entry 1 that has no deposit.
    await rawAckDeposit(bridge, DISHONEST, { index: 0n, approve: true, amount: real.amount, recipient: real.recipient, sourceMint: frozen });
    const fabricated = { index: 1n, approve: true, amount: 5_000n, recipient: real.recipient, sourceMint: bridge.world.tokenPairs.normal.sourceMint };
    await rawAckDeposit(bridge, DISHONEST, fabricated);

    for (let round = 0; round < 3; round++) await runRound(honest);
    expect(depositTracker(bridge).header.settledPrefix).toBe(1n);
    expect(withdrawTracker(bridge).entries[1]).toMatchObject({ status: 'Voting', amount: 5_000n, yesVotes: votersMask(DISHONEST), noVotes: 0 });
    expect(await runRound(honest)).toEqual([NOTHING_ATTEMPTED, NOTHING_ATTEMPTED]);

    await deposit(bridge, { amount: 200n, sourceMint: frozen });
    expect(await runRound(honest)).toEqual([
      { ...NOTHING_ATTEMPTED, ack_deposit_attempted: true },
      { ...NOTHING_ATTEMPTED, ack_deposit_attempted: true },
    ]);
    expect(withdrawTracker(bridge).header.entryCount).toBe(1n);
    for (let round = 0; round < 3; round++) await runRound(honest);

    expectSettled(bridge, 2, [0, 1]);
    expect(withdrawTracker(bridge).entries[1]).toMatchObject({ amount: 200n, result: { kind: 'Rejected', reason: 'TokenPairFrozen' } });
    for (const crank of honest) expect(crank.service.health().last_error).toBeNull();
    await expectTransactionsAccounted(bridge, honest);
  });

  it('relays a Confirmed result before the user claimed it: rule 3.1 keeps the honest cranks out until the claim', async () => {
    bridge = await startDevnetBridge();
    const honest = await startBridgeCranks(bridge, [0, 1]);
    const [a, b] = honest;
    await deposit(bridge, { amount: 300n, sourceMint: bridge.world.tokenPairs.normal.sourceMint });
    await runRound(honest);
    const confirmed: DepositResult = { kind: 'Confirmed', amount: 300n };
    expect(withdrawTracker(bridge).entries[0]).toMatchObject({ status: 'Finalized', result: confirmed, createdTokenAccount: 'Pending' });

    await rawAckWithdraw(bridge, DISHONEST, { index: 0, approve: true, result: confirmed });
    // The source is read at finalized: the honest cranks' reads hold the relayed result before they are kept out.
    await banksCaughtUp(bridge);
    expect(await runRound(honest)).toEqual([NOTHING_ATTEMPTED, NOTHING_ATTEMPTED]);
    expect(depositTracker(bridge).entries[0]).toMatchObject({ status: 'Relaying', yesVotes: votersMask(DISHONEST) });

    await claim(bridge, 0);
    // Authority 0's yes reaches the threshold; authority 1, its read caught up with it, votes late and
    // leaves the cleanup to authority 0, whose turn entry 0 is (docs/crank.md "Cleanup turns").
    expect(await a!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true });
    await banksCaughtUp(bridge);
    expect(await b!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true });
    expect(await a!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, cleanup_attempted: 1, cleanup_completed: 1 });
    expect(depositTracker(bridge).entries[0]).toMatchObject({ yesVotes: votersMask(0, 1, DISHONEST), refundedAmount: 0n });
    expectSettled(bridge, 1, [0, 1]);
    await expectTransactionsAccounted(bridge, honest);
  });
});
