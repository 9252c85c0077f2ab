import { describe, expect, it } from 'vitest';
import {
  MAX_ERROR_CHARS,
  actionFailed,
  attemptFailed,
  attemptStarted,
  cycleFinished,
  cycleStarted,
  readFailed,
} from '../../src/machines/step-records.js';
import { initialCrankContext, type CrankContext } from '../../src/machines/crank-context.js';
import { crankSettings } from '../../src/machines/crank-settings.js';
import type { CyclePlan } from '../../src/machines/planning/cycle-plan.js';
import { TEST_CRANK_SETTINGS } from './support/test-crank.js';

const settings = { ...crankSettings(TEST_CRANK_SETTINGS), maxBacklogCycles: 2 };

function inCycle(plan: CyclePlan | null, changes: Partial<CrankContext> = {}): CrankContext {
  const context = { ...initialCrankContext(settings), ...changes };
  return { ...context, ...cycleStarted(context, 1000).update, plan };
}

const backlogPlan: CyclePlan = {
  ackDeposit: { votes: [{ index: 0, approve: true, amount: '1', recipient: 'R', sourceMint: 'M' }], pending: 9 },
  ackWithdraw: { votes: [], pending: 0 },
  cleanup: { indices: [], pending: 0 },
};

describe('step records', () => {
  it('clears last_error only when the cycle completed without a failed action', () => {
    const health = { ...initialCrankContext(settings).health, lastError: 'ack_deposit failed after 3 attempts: x' };
    const clean = inCycle(null, { health });
    expect(cycleFinished(clean, 2000).update.health?.lastError).toBeNull();
    const failed = { ...clean, cycle: { ...clean.cycle!, failed: true } };
    expect(cycleFinished(failed, 2000).update.health?.lastError).toBe('ack_deposit failed after 3 attempts: x');
  });

  it('drains a backlog at most maxBacklogCycles times in a row, and never after a failed cycle', () => {
    let context = inCycle(backlogPlan);
    const drains: boolean[] = [];
    for (let cycle = 0; cycle < 4; cycle++) {
      const { update } = cycleFinished(context, 2000);
      drains.push(update.drainBacklog === true);
      context = inCycle(backlogPlan, { backlogStreak: update.backlogStreak ?? 0 });
    }
    expect(drains).toEqual([true, true, false, true]);
    const failed = inCycle(backlogPlan);
    expect(cycleFinished({ ...failed, cycle: { ...failed.cycle!, failed: true } }, 2000).update.drainBacklog).toBe(false);
  });

  it('reports the cycle to the requests it serves, with its duration', () => {
    const context = inCycle(null, { queuedRequests: ['r1', 'r2'] });
    expect(cycleFinished(context, 3500).emit).toEqual([
      {
        type: 'cycleFinished',
        outcome: 'ok',
        report: { ack_deposit_attempted: false, ack_withdraw_attempted: false, cleanup_attempted: 0, cleanup_completed: 0 },
        requests: ['r1', 'r2'],
        atMs: 3500,
        durationMs: 2500,
      },
    ]);
  });

  it('counts distinct cleanup entries across attempts', () => {
    const plan = (indices: number[]): CyclePlan => ({ ...backlogPlan, cleanup: { indices, pending: indices.length } });
    let context = inCycle(plan([3, 5]));
    context = { ...context, ...attemptStarted(context, 'cleanup', 1100).update };
    context = { ...context, plan: plan([5, 8]) };
    context = { ...context, ...attemptStarted(context, 'cleanup', 1200).update };
    expect(context.cycle?.cleanupSubmitted).toEqual([3, 5, 8]);
    expect(context.cycle?.attempted).toEqual({ ack_deposit: false, ack_withdraw: false, cleanup: true });
  });

  it('bounds and cleans the error that becomes last_error and the log line, for a read and for an action', () => {
    const huge = new Error(`node said\n${'e'.repeat(100_000)} https://rpc.example/KEY`);
    const read = readFailed(inCycle(null), huge);
    const lastError = read.update.health?.lastError ?? '';
    expect(lastError).toMatch(/^reading the trackers failed: node said e+… \(\d+ more\)$/);
    expect(lastError.length).toBeLessThanOrEqual('reading the trackers failed: '.length + MAX_ERROR_CHARS + 20);
    expect(read.emit).toEqual([{ type: 'readFailed', error: expect.stringMatching(/^node said e+… \(\d+ more\)$/) }]);

    const context = inCycle(backlogPlan);
    const failed = { ...context, ...attemptFailed({ ...context, ...attemptStarted(context, 'ack_deposit', 1100).update }, huge).update };
    expect(failed.progress.failure?.error).toMatch(/^node said e+… \(\d+ more\)$/);
    const health = actionFailed(failed, 'ack_deposit').update.health;
    expect(health?.lastError).not.toContain('\n');
    expect(health?.lastError?.length).toBeLessThan(MAX_ERROR_CHARS + 100);
  });
});
