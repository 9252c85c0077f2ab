import { describe, expect, it } from 'vitest';
import { planCleanups } from '../../../src/machines/planning/cycle-plan.js';
import { bridgeView, deposit } from '../support/bridge-view.js';

const finalized = (n: number, cleanupCompleted = false) =>
  deposit(n, { status: 'Finalized', cleanupCompleted, result: { kind: 'Rejected', reason: 'InternalError' } });

describe('planCleanups', () => {
  it('picks Finalized entries not cleaned up yet, from settled_prefix on', () => {
    const view = bridgeView({
      deposits: [
        finalized(0, true),
        finalized(1, true),
        finalized(2),
        deposit(3, { status: 'Relaying' }),
        finalized(4, true),
        finalized(5),
        deposit(6),
      ],
      withdrawals: [],
      sourceSettled: 2,
      ownSourceNext: 7,
      ownTargetNext: 7,
    });
    expect(planCleanups(view, 64)).toEqual({ indices: [2, 5], pending: 2, waits: [] });
  });

  it('plans nothing when every finalized entry is cleaned up', () => {
    const view = bridgeView({ deposits: [finalized(0, true), deposit(1)], withdrawals: [], sourceSettled: 1, ownSourceNext: 2, ownTargetNext: 2 });
    expect(planCleanups(view, 64)).toEqual({ indices: [], pending: 0, waits: [] });
  });

  it('caps the batch and counts every candidate as pending', () => {
    const view = bridgeView({
      deposits: Array.from({ length: 10 }, (_, n) => finalized(n)),
      withdrawals: [],
      ownSourceNext: 10,
      ownTargetNext: 10,
    });
    expect(planCleanups(view, 3)).toEqual({ indices: [0, 1, 2], pending: 10, waits: [] });
  });

  it('fails with CRANK__ENTRY_NOT_FOUND when the window starts above settled_prefix', () => {
    const view = bridgeView({ deposits: [finalized(0), finalized(1)], withdrawals: [], depositWindowStart: 1, ownSourceNext: 2, ownTargetNext: 2 });
    expect(() => planCleanups(view, 64)).toThrow(
      expect.objectContaining({ code: 'CRANK__ENTRY_NOT_FOUND', context: expect.objectContaining({ index: 0 }) }),
    );
  });

  it('finds candidates in every run the bounded read holds, and none between them', () => {
    const view = bridgeView({ deposits: Array.from({ length: 10 }, (_, n) => finalized(n)), withdrawals: [], ownSourceNext: 10, ownTargetNext: 10 });
    view.deposits.entries = new Map([...view.deposits.entries].filter(([index]) => index < 2 || index >= 8));
    expect(planCleanups(view, 64)).toEqual({ indices: [0, 1, 8, 9], pending: 4, waits: [] });
  });
});
