import { describe, expect, it } from 'vitest';
import type { DepositEntry, DepositResult, RejectionReason } from '../../../src/chain/types.js';
import { planAckWithdraws, sameDepositResult } from '../../../src/machines/planning/cycle-plan.js';
import { bridgeView, CONFIRMED_FULL, deposit, deposits, finalizedWithdrawal, withdrawal } from '../support/bridge-view.js';

const REASONS: RejectionReason[] = ['InternalError', 'InsufficientFunds', 'LimitExceeded', 'TokenPairFrozen', 'TokenPairNotFound'];

function relayed(plan: ReturnType<typeof planAckWithdraws>) {
  return plan.votes.map((planned) => planned.vote);
}

describe('planAckWithdraws', () => {
  it('proposes each ready result on Initialized source entries, in order from next_index', () => {
    const source = deposits(3);
    const partial: DepositResult = { kind: 'Confirmed', amount: 400n };
    const view = bridgeView({
      deposits: source,
      withdrawals: [
        finalizedWithdrawal(source[0]!, CONFIRMED_FULL(source[0]!)),
        finalizedWithdrawal(source[1]!, partial),
        finalizedWithdrawal(source[2]!, { kind: 'Rejected', reason: 'LimitExceeded' }),
      ],
      ownTargetNext: 3,
    });
    const plan = planAckWithdraws(view, 64);
    expect(relayed(plan)).toEqual([
      { index: 0, approve: true, result: { kind: 'Confirmed', amount: source[0]!.amount.toString() } },
      { index: 1, approve: true, result: { kind: 'Confirmed', amount: '400' } },
      { index: 2, approve: true, result: { kind: 'Rejected', reason: 'LimitExceeded' } },
    ]);
    expect(plan.votes.map((planned) => planned.destination)).toEqual([
      { status: 'Finalized', createdTokenAccount: 'Created', result: { kind: 'Confirmed' } },
      { status: 'Finalized', createdTokenAccount: 'Created', result: { kind: 'Confirmed' } },
      { status: 'Finalized', createdTokenAccount: 'NotRequired', result: { kind: 'Rejected' } },
    ]);
    expect(plan.pending).toBe(3);
  });

  it.each(REASONS)('relays Rejected(%s) at once: no token account is involved', (reason) => {
    const source = deposits(1);
    const view = bridgeView({
      deposits: source,
      withdrawals: [finalizedWithdrawal(source[0]!, { kind: 'Rejected', reason })],
      ownTargetNext: 1,
    });
    expect(relayed(planAckWithdraws(view, 64))).toEqual([{ index: 0, approve: true, result: { kind: 'Rejected', reason } }]);
  });

  it('stops at the first entry rule 3.1 does not allow (Confirmed, token account Pending), even if later ones are ready', () => {
    const source = deposits(3);
    const view = bridgeView({
      deposits: source,
      withdrawals: [
        finalizedWithdrawal(source[0]!, { kind: 'Rejected', reason: 'TokenPairFrozen' }),
        finalizedWithdrawal(source[1]!, CONFIRMED_FULL(source[1]!), { createdTokenAccount: 'Pending' }),
        finalizedWithdrawal(source[2]!, { kind: 'Rejected', reason: 'TokenPairFrozen' }),
      ],
      ownTargetNext: 3,
    });
    const plan = planAckWithdraws(view, 64);
    expect(relayed(plan).map((vote) => vote.index)).toEqual([0]);
    expect(plan.pending).toBe(1);
  });

  it('does not relay an entry still Voting on the destination', () => {
    const source = deposits(2);
    const view = bridgeView({ deposits: source, withdrawals: [withdrawal(source[0]!), withdrawal(source[1]!)], ownTargetNext: 2 });
    expect(planAckWithdraws(view, 64)).toEqual({ votes: [], pending: 0 });
  });

  it.each<[string, DepositEntry['status'], DepositResult, boolean]>([
    ['Relaying with the right proposal: approve', 'Relaying', { kind: 'Rejected', reason: 'InsufficientFunds' }, true],
    ['Relaying with a wrong (byzantine) proposal: no', 'Relaying', { kind: 'Confirmed', amount: 1n }, false],
    ['Finalized with the right result (late vote): approve', 'Finalized', { kind: 'Rejected', reason: 'InsufficientFunds' }, true],
    ['Finalized with a wrong result (late vote): no', 'Finalized', { kind: 'Rejected', reason: 'InternalError' }, false],
  ])('votes on a source entry %s', (_case, status, proposed, approve) => {
    const source = [deposit(0, { status, proposed, result: status === 'Finalized' ? proposed : { kind: 'None' } })];
    const destinationResult: DepositResult = { kind: 'Rejected', reason: 'InsufficientFunds' };
    const view = bridgeView({ deposits: source, withdrawals: [finalizedWithdrawal(source[0]!, destinationResult)], ownTargetNext: 1 });
    // A no vote still carries the destination result: the program validates it.
    expect(relayed(planAckWithdraws(view, 64))).toEqual([{ index: 0, approve, result: { kind: 'Rejected', reason: 'InsufficientFunds' } }]);
  });

  it("starts at this authority's own next_index on the source", () => {
    const source = deposits(3);
    const view = bridgeView({
      deposits: source,
      withdrawals: source.map((d) => finalizedWithdrawal(d, CONFIRMED_FULL(d))),
      ownSourceNext: 2,
      ownTargetNext: 3,
    });
    expect(relayed(planAckWithdraws(view, 64)).map((vote) => vote.index)).toEqual([2]);
  });

  it('stops at a Confirmed amount above the deposit, which the source program rejects on any vote', () => {
    const source = deposits(2);
    const view = bridgeView({
      deposits: source,
      withdrawals: [
        finalizedWithdrawal(source[0]!, { kind: 'Confirmed', amount: source[0]!.amount + 1n }),
        finalizedWithdrawal(source[1]!, CONFIRMED_FULL(source[1]!)),
      ],
      ownTargetNext: 2,
    });
    expect(planAckWithdraws(view, 64)).toEqual({ votes: [], pending: 0 });
  });

  it('caps the votes at the batch limit and counts every ready result as pending', () => {
    const source = deposits(10);
    const view = bridgeView({ deposits: source, withdrawals: source.map((d) => finalizedWithdrawal(d, CONFIRMED_FULL(d))), ownTargetNext: 10 });
    const plan = planAckWithdraws(view, 4);
    expect(relayed(plan).map((vote) => vote.index)).toEqual([0, 1, 2, 3]);
    expect(plan.pending).toBe(10);
  });
});

describe('sameDepositResult', () => {
  const confirmed = (amount: bigint): DepositResult => ({ kind: 'Confirmed', amount });
  const rejected = (reason: RejectionReason): DepositResult => ({ kind: 'Rejected', reason });
  it.each<[string, DepositResult, DepositResult, boolean]>([
    ['None, None', { kind: 'None' }, { kind: 'None' }, true],
    ['Confirmed(5), Confirmed(5)', confirmed(5n), confirmed(5n), true],
    ['Confirmed(5), Confirmed(6)', confirmed(5n), confirmed(6n), false],
    ['Rejected(LimitExceeded) twice', rejected('LimitExceeded'), rejected('LimitExceeded'), true],
    ['Rejected with different reasons', rejected('LimitExceeded'), rejected('InternalError'), false],
    ['Confirmed(0), Rejected', confirmed(0n), rejected('InternalError'), false],
    ['None, Confirmed(0)', { kind: 'None' }, confirmed(0n), false],
  ])('%s', (_case, a, b, same) => {
    expect(sameDepositResult(a, b)).toBe(same);
    expect(sameDepositResult(b, a)).toBe(same);
  });

  it('stops where the bounded read of either tracker ends: the rest is the next cycle', () => {
    const source = deposits(6);
    const view = bridgeView({
      deposits: source,
      withdrawals: source.map((d) => finalizedWithdrawal(d, { kind: 'Rejected', reason: 'LimitExceeded' })),
      ownTargetNext: 6,
    });
    const readTo = <E>(entries: ReadonlyMap<number, E>, end: number) => new Map([...entries].filter(([index]) => index < end));
    view.withdrawals.entries = readTo(view.withdrawals.entries, 4);
    expect(planAckWithdraws(view, 64)).toMatchObject({ pending: 4 });
    view.deposits.entries = readTo(view.deposits.entries, 2);
    const plan = planAckWithdraws(view, 64);
    expect(relayed(plan).map((vote) => vote.index)).toEqual([0, 1]);
    expect(plan.pending).toBe(2);
  });

  it('fails with CRANK__ENTRY_NOT_FOUND when the source read does not hold its own next_index', () => {
    const source = deposits(3);
    const view = bridgeView({
      deposits: source,
      withdrawals: source.map((d) => finalizedWithdrawal(d, { kind: 'Rejected', reason: 'LimitExceeded' })),
      ownTargetNext: 3,
    });
    view.deposits.entries = new Map([...view.deposits.entries].filter(([index]) => index > 0));
    expect(() => planAckWithdraws(view, 64)).toThrow(
      expect.objectContaining({ code: 'CRANK__ENTRY_NOT_FOUND', context: expect.objectContaining({ index: 0 }) }),
    );
  });
});
