import { describe, expect, it } from 'vitest';
import { planAckDeposits } from '../../../src/machines/planning/cycle-plan.js';
import { AUTHORITY, bridgeView, deposit, deposits, OTHER_AUTHORITIES, trackerHeader, withdrawal } from '../support/bridge-view.js';

function expectedVote(index: number, approve: boolean) {
  const source = deposit(index);
  return { index, approve, amount: source.amount.toString(), recipient: source.recipient, sourceMint: source.sourceMint };
}

describe('planAckDeposits', () => {
  it('approves matching proposals, then proposes the rest consecutively from entry_count', () => {
    const source = deposits(5);
    const view = bridgeView({ deposits: source, withdrawals: [withdrawal(source[0]!), withdrawal(source[1]!)] });
    const plan = planAckDeposits(view, 64);
    expect(plan.votes).toEqual([0, 1, 2, 3, 4].map((index) => expectedVote(index, true)));
    expect(plan.pending).toBe(5);
  });

  it.each([
    ['amount', { amount: 999_999n }],
    ['recipient', { recipient: 'Mallory11111111111111111111111111111111111' }],
    ['source_mint', { sourceMint: 'OtherMint1111111111111111111111111111111111' }],
  ])('votes no on a proposal whose %s differs from the source entry (byzantine proposer)', (_field, wrong) => {
    const source = deposits(3);
    const view = bridgeView({
      deposits: source,
      withdrawals: [withdrawal(source[0]!), withdrawal(source[1]!, wrong), withdrawal(source[2]!)],
    });
    expect(planAckDeposits(view, 64).votes).toEqual([expectedVote(0, true), expectedVote(1, false), expectedVote(2, true)]);
  });

  it('casts late votes on Finalized entries by the same rule', () => {
    const source = deposits(2);
    const finalized = { status: 'Finalized' as const, result: { kind: 'Confirmed' as const, amount: source[0]!.amount } };
    const view = bridgeView({
      deposits: source,
      withdrawals: [withdrawal(source[0]!, finalized), withdrawal(source[1]!, { ...finalized, amount: 1n })],
    });
    expect(planAckDeposits(view, 64).votes).toEqual([expectedVote(0, true), expectedVote(1, false)]);
  });

  it("starts at this authority's own next_index", () => {
    const source = deposits(4);
    const view = bridgeView({ deposits: source, withdrawals: source.slice(0, 3).map((d) => withdrawal(d)), ownTargetNext: 2 });
    const plan = planAckDeposits(view, 64);
    expect(plan.votes).toEqual([expectedVote(2, true), expectedVote(3, true)]);
    expect(plan.pending).toBe(2);
  });

  it('plans nothing once this authority has voted on every source entry', () => {
    const source = deposits(3);
    const view = bridgeView({ deposits: source, withdrawals: source.map((d) => withdrawal(d)), ownTargetNext: 3 });
    expect(planAckDeposits(view, 64)).toEqual({ votes: [], pending: 0 });
  });

  it('never votes past the source entries it has read, even if others proposed further', () => {
    const source = deposits(5);
    const view = bridgeView({ deposits: source, withdrawals: source.map((d) => withdrawal(d)), ownTargetNext: 3 });
    view.deposits.header.entryCount = 3n;
    view.deposits.entries = new Map([...view.deposits.entries].filter(([index]) => index < 3));
    expect(planAckDeposits(view, 64)).toEqual({ votes: [], pending: 0 });
  });

  it('re-proposes from the rewound position after a threshold no removed entries', () => {
    // The program left entry_count = 2 and every next_index <= 2; entries from 2 on are gone.
    const source = deposits(4);
    const view = bridgeView({ deposits: source, withdrawals: source.slice(0, 2).map((d) => withdrawal(d)), ownTargetNext: 2 });
    expect(planAckDeposits(view, 64).votes).toEqual([expectedVote(2, true), expectedVote(3, true)]);
  });

  it('stops at a removed (Empty) entry below entry_count: the read is inconsistent', () => {
    const source = deposits(4);
    const view = bridgeView({
      deposits: source,
      withdrawals: [withdrawal(source[0]!), withdrawal(source[1]!, { status: 'Empty' }), withdrawal(source[2]!)],
    });
    expect(planAckDeposits(view, 64).votes).toEqual([expectedVote(0, true)]);
  });

  it('caps the votes at the batch limit and reports the whole backlog as pending', () => {
    const view = bridgeView({ deposits: deposits(100), withdrawals: [] });
    const plan = planAckDeposits(view, 64);
    expect(plan.votes.map((vote) => vote.index)).toEqual(Array.from({ length: 64 }, (_, i) => i));
    expect(plan.votes.every((vote) => vote.approve)).toBe(true);
    expect(plan.pending).toBe(100);
  });

  it('fails with CRANK__ENTRY_NOT_FOUND when the read window misses an entry it must vote on', () => {
    const source = deposits(4);
    const view = bridgeView({ deposits: source, withdrawals: [], depositWindowStart: 2 });
    expect(() => planAckDeposits(view, 64)).toThrow(
      expect.objectContaining({
        code: 'CRANK__ENTRY_NOT_FOUND',
        context: { tracker: 'DepositTracker', index: 0, windowStart: 2, windowEnd: 4 },
      }),
    );
  });

  it('fails with CHAIN__AUTHORITY_NOT_FOUND when the key is not an authority of the destination', () => {
    const view = bridgeView({ deposits: deposits(1), withdrawals: [] });
    view.withdrawals.header = trackerHeader('WithdrawTracker', { entryCount: 0, ownNext: 0, authorities: OTHER_AUTHORITIES });
    expect(() => planAckDeposits(view, 64)).toThrow(
      expect.objectContaining({ code: 'CHAIN__AUTHORITY_NOT_FOUND', context: { chain: 'target', authority: AUTHORITY } }),
    );
  });
});
