import { describe, expect, it } from 'vitest';
import { planCycle } from '../../../src/machines/planning/cycle-plan.js';
import { stagesFinished, waitingRead, type DepositProgress } from '../../../src/machines/planning/waiting.js';
import { bridgeView, deposit, deposits, finalizedWithdrawal, NOT_WAITING } from '../support/bridge-view.js';

const finalized = (n: number, overrides = {}) =>
  deposit(n, { status: 'Finalized', result: { kind: 'Rejected', reason: 'InternalError' }, depositSlot: BigInt(100 + n), ...overrides });

describe('waitingRead', () => {
  it('ages the first unvoted deposit in source slots since deposit_slot, and each planned vote', () => {
    const view = bridgeView({ deposits: deposits(3, { depositSlot: 900n }), withdrawals: [], slots: { source: 1000, target: 5000 } });
    const waiting = waitingRead(view, planCycle(view));
    expect(waiting.oldest).toEqual({ ack_deposit: { index: 0, ageSlots: 100 }, ack_withdraw: null, cleanup_deposit: null });
    expect(waiting.votes.ack_deposit).toEqual([0, 1, 2].map((index) => ({ index, ageSlots: 100 })));
    expect(waiting.slots).toEqual({ source: 1000, target: 5000 });
  });

  it('ages a relayable result in destination slots since finalized_slot, and a cleanup since deposit_slot', () => {
    const source = [finalized(0), deposit(1, { depositSlot: 150n })];
    const view = bridgeView({
      deposits: source,
      withdrawals: [
        finalizedWithdrawal(source[0]!, { kind: 'Rejected', reason: 'InternalError' }),
        finalizedWithdrawal(source[1]!, { kind: 'Rejected', reason: 'InternalError' }, { finalizedSlot: 4900n }),
      ],
      ownSourceNext: 1,
      ownTargetNext: 2,
      slots: { source: 1000, target: 5000 },
    });
    const waiting = waitingRead(view, planCycle(view));
    expect(waiting.oldest).toEqual({
      ack_deposit: null,
      ack_withdraw: { index: 1, ageSlots: 100 },
      cleanup_deposit: { index: 0, ageSlots: 900 },
    });
    expect(waiting.votes.ack_withdraw).toEqual([{ index: 1, ageSlots: 100 }]);
  });

  it('never ages an entry below zero (entries read after the slot the view reports)', () => {
    const view = bridgeView({ deposits: deposits(1, { depositSlot: 1200n }), withdrawals: [], slots: { source: 1000, target: 1000 } });
    expect(waitingRead(view, planCycle(view)).oldest.ack_deposit).toEqual({ index: 0, ageSlots: 0 });
  });

  it('lists the source entries read with their progress', () => {
    const view = bridgeView({
      deposits: [finalized(0, { cleanupCompleted: true }), finalized(1), deposit(2)],
      withdrawals: [],
      sourceSettled: 1,
      ownSourceNext: 3,
      ownTargetNext: 3,
    });
    const waiting = waitingRead(view, planCycle(view));
    expect(waiting.settledPrefix).toBe(1);
    expect(waiting.deposits).toEqual([
      { index: 1, depositSlot: 101, finalized: true, cleanedUp: false },
      { index: 2, depositSlot: 2, finalized: false, cleanedUp: false },
    ]);
  });
});

describe('stagesFinished', () => {
  const entry = (index: number, progress: Partial<DepositProgress> = {}): DepositProgress => ({
    index,
    depositSlot: 100 + index,
    finalized: false,
    cleanedUp: false,
    ...progress,
  });
  const read = (deposits: DepositProgress[], settledPrefix = 0, source = 1000) => ({
    ...NOT_WAITING,
    slots: { source, target: 0 },
    settledPrefix,
    deposits,
  });

  it('sees a finalization, then a cleanup, each once, aged from deposit_slot to the read that saw it', () => {
    const first = read([entry(0), entry(1)]);
    const second = read([entry(0, { finalized: true }), entry(1)], 0, 1010);
    const third = read([entry(0, { finalized: true, cleanedUp: true }), entry(1)], 0, 1020);
    expect(stagesFinished([], first)).toEqual([]);
    expect(stagesFinished(first.deposits, second)).toEqual([{ stage: 'ack_withdraw', index: 0, ageSlots: 910 }]);
    expect(stagesFinished(second.deposits, third)).toEqual([{ stage: 'cleanup', index: 0, ageSlots: 920 }]);
    expect(stagesFinished(third.deposits, read(third.deposits, 0, 1030))).toEqual([]);
  });

  it('counts an entry that fell below settled_prefix as finalized and cleaned up', () => {
    expect(stagesFinished([entry(0), entry(1, { finalized: true })], read([], 2))).toEqual([
      { stage: 'ack_withdraw', index: 0, ageSlots: 900 },
      { stage: 'cleanup', index: 0, ageSlots: 900 },
      { stage: 'cleanup', index: 1, ageSlots: 899 },
    ]);
  });

  it('counts nothing for an entry the read no longer holds, or holds with another deposit_slot', () => {
    expect(stagesFinished([entry(5)], read([]))).toEqual([]);
    expect(stagesFinished([entry(5)], read([entry(5, { depositSlot: 999, finalized: true })]))).toEqual([]);
  });
});
