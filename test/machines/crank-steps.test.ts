import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { transition, type EventFromLogic, type StateValue } from 'xstate';
import { crankSettings, initialCrankContext, type CrankContext, type CycleRead } from '../../src/machines/crank-context.js';
import { crankMachine } from '../../src/machines/crank-machine.js';
import type { CrankEmitted } from '../../src/machines/crank-types.js';
import { MAX_ERROR_CHARS } from '../../src/machines/health.js';
import type { CyclePlan } from '../../src/machines/planning/cycle-plan.js';
import { TEST_CRANK_SETTINGS, useCrankClock } from './support/test-crank.js';

/**
 * What each step of the machine writes and emits, checked with xstate's pure `transition()`:
 * a snapshot and an event in, the next snapshot and the actions it would run out; no actor runs.
 */

const settings = { ...crankSettings(TEST_CRANK_SETTINGS), maxBacklogCycles: 2 };

type MachineEvent = EventFromLogic<typeof crankMachine>;
/** The done and error events of the machine's invoked actors are xstate's own, outside CrankEvent. */
const actorDone = (id: 'read' | 'reread' | 'submit', output: unknown) => ({ type: `xstate.done.actor.${id}`, output }) as unknown as MachineEvent;
const actorError = (id: 'read' | 'submit', error: unknown) => ({ type: `xstate.error.actor.${id}`, error }) as unknown as MachineEvent;

function step(value: StateValue, context: CrankContext, event: MachineEvent) {
  const [snapshot, actions] = transition(crankMachine, crankMachine.resolveState({ value, context }), event);
  // ExecutableActionsFrom leaves xstate's own emit action out of its type; at run time it is there.
  const emitted = (actions as Array<{ type: string; params: unknown }>)
    .filter((action) => action.type === 'xstate.emit')
    .map((action) => (action.params as { event: CrankEmitted }).event);
  return { context: snapshot.context, value: snapshot.value, emitted };
}

/** A cycle that has started (idle, then POLL), with the context's other fields as given. */
function inCycle(changes: Partial<CrankContext> = {}): CrankContext {
  return step('idle', { ...initialCrankContext(settings), ...changes }, { type: 'POLL' }).context;
}

const EMPTY_PLAN: CyclePlan = {
  ackDeposit: { votes: [], pending: 0 },
  ackWithdraw: { votes: [], pending: 0 },
  cleanup: { indices: [], pending: 0, waits: [] },
};

const backlogPlan: CyclePlan = {
  ...EMPTY_PLAN,
  ackDeposit: { votes: [{ index: 0, approve: true, amount: '1', recipient: 'R', sourceMint: 'M' }], pending: 9 },
};

const landedNothing = { transactions: [], completed: [], alreadyDone: [] };

/** The context once a cycle has planned `plan` and its last action (cleanup) submitted and landed: the cycle ends. */
function finished(context: CrankContext, plan: CyclePlan | null) {
  return step({ cleanup: 'submitting' }, { ...context, plan }, actorDone('submit', landedNothing));
}

beforeEach(useCrankClock);
afterEach(() => {
  vi.useRealTimers();
});

describe('crank machine steps', () => {
  it('clears last_error only when the cycle completed without a failed action', () => {
    const health = { ...initialCrankContext(settings).health, lastError: 'ack_deposit failed after 3 attempts: x' };
    const clean = inCycle({ health });
    expect(finished(clean, null).context.health.lastError).toBeNull();
    const failed = { ...clean, cycle: { ...clean.cycle!, failed: true } };
    expect(finished(failed, null).context.health.lastError).toBe('ack_deposit failed after 3 attempts: x');
  });

  it('drains a backlog at most maxBacklogCycles times in a row, never after a failed cycle, nor after one that submitted nothing', () => {
    const submitted = (context: CrankContext): CrankContext => ({
      ...context,
      cycle: { ...context.cycle!, attempted: { ack_deposit: true, ack_withdraw: false, cleanup: false } },
    });
    let context = submitted(inCycle());
    const drains: boolean[] = [];
    for (let cycle = 0; cycle < 4; cycle++) {
      const next = finished(context, backlogPlan).context;
      drains.push(next.drainBacklog);
      context = submitted(inCycle({ backlogStreak: next.backlogStreak }));
    }
    expect(drains).toEqual([true, true, false, true]);
    const failed = submitted(inCycle());
    expect(finished({ ...failed, cycle: { ...failed.cycle!, failed: true } }, backlogPlan).context.drainBacklog).toBe(false);
    // A standby, a halted crank, a dry run or a chain short of fees: the same entries would be read again at once.
    expect(finished(inCycle(), backlogPlan).context.drainBacklog).toBe(false);
  });

  it('reports the cycle to the requests it serves, with its duration', () => {
    const context = inCycle({ queuedRequests: ['r1', 'r2'] });
    vi.advanceTimersByTime(2500);
    const { emitted, value } = finished(context, null);
    expect(value).toBe('idle');
    expect(emitted.filter((event) => event.type === 'cycleFinished')).toEqual([
      {
        type: 'cycleFinished',
        outcome: 'ok',
        kind: 'active',
        report: { ack_deposit_attempted: false, ack_withdraw_attempted: false, cleanup_attempted: 0, cleanup_completed: 0 },
        requests: ['r1', 'r2'],
        atMs: Date.now(),
        durationMs: 2500,
      },
    ]);
  });

  it('counts distinct cleanup entries across attempts', () => {
    const plan = (indices: number[]): CyclePlan => ({ ...EMPTY_PLAN, cleanup: { indices, pending: indices.length, waits: [] } });
    const retry = (context: CrankContext, indices: number[]) =>
      step(
        { cleanup: 'replanning' },
        context,
        actorDone('reread', { plan: plan(indices), authority: quietAuthority(), fees: { source: 0, target: 0 }, waiting: null, readAtMs: 0 }),
      );
    let context = step({ cleanup: 'checking' }, { ...inCycle(), plan: plan([3, 5]) }, { type: 'POLL' }).context;
    context = step({ cleanup: 'submitting' }, context, actorError('submit', new Error('timeout'))).context;
    context = retry(context, [5, 8]).context;
    expect(context.cycle?.cleanupSubmitted).toEqual([3, 5, 8]);
    expect(context.cycle?.attempted).toEqual({ ack_deposit: false, ack_withdraw: false, cleanup: true });
  });

  it('bounds and cleans the error that becomes last_error and the log line, for a read and for an action', () => {
    const huge = new Error(`node said\n${'e'.repeat(100_000)} https://rpc.example/KEY`);
    const read = step('polling', inCycle(), actorError('read', huge));
    const lastError = read.context.health.lastError ?? '';
    expect(lastError).toMatch(/^reading the trackers failed: node said e+… \(\d+ more\)$/);
    expect(lastError.length).toBeLessThanOrEqual('reading the trackers failed: '.length + MAX_ERROR_CHARS + 20);
    expect(read.emitted.filter((event) => event.type === 'readFailed')).toEqual([
      { type: 'readFailed', error: expect.stringMatching(/^node said e+… \(\d+ more\)$/), behindFloor: false },
    ]);

    const submitting = {
      ...inCycle(),
      plan: backlogPlan,
      progress: { attempt: 3, attemptStartedAtMs: Date.now(), submitted: [0], failure: null, lastFailure: null },
    };
    const { context: failed, emitted } = step({ ack_deposit: 'submitting' }, submitting, actorError('submit', huge));
    const attempt = emitted.find((event) => event.type === 'attempt');
    expect(attempt).toMatchObject({ outcome: 'failed', willRetry: false, error: expect.stringMatching(/^node said e+… \(\d+ more\)$/) });
    expect(failed.health.lastError).not.toContain('\n');
    expect(failed.health.lastError?.length).toBeLessThan(MAX_ERROR_CHARS + 100);
    expect(failed.health.lastAction).toBe('ack_deposit 0 (1 vote) failed after 3 attempts');
  });
});

function quietAuthority(): CycleRead['authority'] {
  return { source: { balance: 1e9, transactions: [] }, target: { balance: 1e9, transactions: [] } };
}
