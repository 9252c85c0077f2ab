import { describe, expect, it } from 'vitest';
import type { CreatedTokenAccount, DepositResult, WithdrawStatus } from '../../src/chain/types.js';
import { hasAckDepositWork, hasAckWithdrawWork, hasCleanupWork } from '../../src/machines/rules.js';
import { isRelayableWithdrawResult, planCycle, type CyclePlan } from '../../src/machines/planning/cycle-plan.js';
import { bridgeView, CONFIRMED_FULL, deposit, finalizedWithdrawal } from './support/bridge-view.js';

const EMPTY_PLAN: CyclePlan = {
  ackDeposit: { votes: [], pending: 0 },
  ackWithdraw: { votes: [], pending: 0 },
  cleanup: { indices: [], pending: 0 },
};

describe('isRelayableWithdrawResult (rule 3.1)', () => {
  it.each<[WithdrawStatus, DepositResult['kind'], CreatedTokenAccount, boolean]>([
    ['Finalized', 'Rejected', 'NotRequired', true],
    ['Finalized', 'Confirmed', 'Created', true],
    ['Finalized', 'Confirmed', 'NotRequired', true],
    ['Finalized', 'Confirmed', 'Pending', false],
    ['Finalized', 'None', 'NotRequired', false],
    ['Voting', 'Rejected', 'NotRequired', false],
    ['Voting', 'Confirmed', 'Created', false],
    ['Empty', 'None', 'Pending', false],
  ])('%s %s with token account %s -> %s', (status, kind, createdTokenAccount, relayable) => {
    expect(isRelayableWithdrawResult({ status, createdTokenAccount, result: { kind } })).toBe(relayable);
  });
});

describe('work guards', () => {
  const source = [deposit(0, { status: 'Finalized', result: { kind: 'Rejected', reason: 'InternalError' } }), deposit(1), deposit(2)];
  const busy = planCycle(
    bridgeView({
      deposits: source,
      withdrawals: [finalizedWithdrawal(source[0]!, { kind: 'Rejected', reason: 'InternalError' }), finalizedWithdrawal(source[1]!, CONFIRMED_FULL(source[1]!))],
      ownSourceNext: 1,
      ownTargetNext: 2,
    }),
  );

  it('see work in a plan that has it', () => {
    expect([hasAckDepositWork(busy), hasAckWithdrawWork(busy), hasCleanupWork(busy)]).toEqual([true, true, true]);
  });

  it('see none in an empty plan or before any plan', () => {
    for (const plan of [EMPTY_PLAN, null]) {
      expect([hasAckDepositWork(plan), hasAckWithdrawWork(plan), hasCleanupWork(plan)]).toEqual([false, false, false]);
    }
  });

  it('hasAckWithdrawWork refuses a plan holding any vote for a result rule 3.1 does not allow', () => {
    const [ready] = busy.ackWithdraw.votes;
    const unready = { ...ready!, destination: { ...ready!.destination, createdTokenAccount: 'Pending' as const } };
    expect(hasAckWithdrawWork({ ...busy, ackWithdraw: { votes: [ready!, unready], pending: 2 } })).toBe(false);
  });
});
