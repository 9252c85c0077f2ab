import { describe, expect, it } from 'vitest';
import { hasBacklog, MAX_PLANNED_PER_ACTION, planCycle } from '../../../src/machines/planning/cycle-plan.js';
import { bridgeView, CONFIRMED_FULL, deposit, deposits, finalizedWithdrawal } from '../support/bridge-view.js';

describe('planCycle', () => {
  it('plans all three actions from one view, JSON-safe', () => {
    const source = [deposit(0, { status: 'Finalized', result: { kind: 'Rejected', reason: 'InternalError' } }), deposit(1), deposit(2)];
    const view = bridgeView({
      deposits: source,
      withdrawals: [
        finalizedWithdrawal(source[0]!, { kind: 'Rejected', reason: 'InternalError' }),
        finalizedWithdrawal(source[1]!, CONFIRMED_FULL(source[1]!)),
      ],
      ownSourceNext: 1,
      ownTargetNext: 2,
    });
    const plan = planCycle(view);
    expect(plan.ackDeposit.votes.map((vote) => vote.index)).toEqual([2]);
    expect(plan.ackWithdraw.votes.map((planned) => planned.vote.index)).toEqual([1]);
    expect(plan.cleanup.indices).toEqual([0]);
    expect(JSON.parse(JSON.stringify(plan))).toEqual(plan);
    expect(hasBacklog(plan)).toBe(false);
  });

  it('uses a default batch of MAX_PLANNED_PER_ACTION and flags the backlog beyond it', () => {
    const plan = planCycle(bridgeView({ deposits: deposits(MAX_PLANNED_PER_ACTION + 1), withdrawals: [] }));
    expect(plan.ackDeposit.votes).toHaveLength(MAX_PLANNED_PER_ACTION);
    expect(hasBacklog(plan)).toBe(true);
  });

  it('has no backlog when the pending work fits exactly', () => {
    expect(hasBacklog(planCycle(bridgeView({ deposits: deposits(MAX_PLANNED_PER_ACTION), withdrawals: [] })))).toBe(false);
  });
});
