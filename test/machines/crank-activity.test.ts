import { describe, expect, it } from 'vitest';
import { CRANK_ACTION_HISTORY, CRANK_CYCLE_HISTORY, activeStateIds, createCrankActivityLog } from '../../src/machines/crank-activity.js';
import type { CrankEmitted } from '../../src/machines/crank-types.js';
import { crankMachineGraph } from '../../src/machines/export.js';

const REPORT = { ack_deposit_attempted: true, ack_withdraw_attempted: false, cleanup_attempted: 0, cleanup_completed: 0 };

function cycle(n: number): CrankEmitted {
  return { type: 'cycleFinished', outcome: 'ok', kind: 'active', report: REPORT, requests: [], atMs: n, durationMs: 5 };
}

function attempt(n: number): CrankEmitted {
  return {
    type: 'attempt',
    action: 'ack_deposit',
    attempt: 1,
    outcome: 'landed',
    indices: [n],
    signatures: [`sig${n}`],
    error: null,
    willRetry: false,
    atMs: n,
    durationMs: 3,
  };
}

describe('crank activity log', () => {
  it('turns a state value into the active state ids, outermost first', () => {
    expect(activeStateIds('idle', 'crank')).toEqual(['crank.idle']);
    expect(activeStateIds({ ack_deposit: 'submitting' }, 'crank')).toEqual(['crank.ack_deposit', 'crank.ack_deposit.submitting']);
  });

  it('keeps the newest CRANK_CYCLE_HISTORY cycles and CRANK_ACTION_HISTORY actions, newest first', () => {
    const log = createCrankActivityLog();
    for (let n = 0; n < CRANK_CYCLE_HISTORY + 5; n += 1) log.record(cycle(n));
    for (let n = 0; n < CRANK_ACTION_HISTORY + 5; n += 1) log.record(attempt(n));
    log.record({ type: 'readFailed', error: 'getMultipleAccounts on source failed (timeout)', behindFloor: false });
    const { cycles, actions } = log.snapshot();
    expect(cycles).toHaveLength(CRANK_CYCLE_HISTORY);
    expect(cycles[0]?.atMs).toBe(CRANK_CYCLE_HISTORY + 4);
    expect(actions).toHaveLength(CRANK_ACTION_HISTORY);
    expect(actions[0]).toMatchObject({ action: 'read', outcome: 'failed', error: 'getMultipleAccounts on source failed (timeout)' });
    expect(actions[1]?.indices).toEqual([CRANK_ACTION_HISTORY + 4]);
  });

  it('holds the latest state only', () => {
    const log = createCrankActivityLog();
    expect(log.snapshot().state).toEqual([]);
    log.recordState({ ack_deposit: 'checking' });
    log.recordState('idle');
    log.record({ type: 'pollCoalesced' });
    expect(log.snapshot()).toEqual({ state: ['crank.idle'], cycles: [], actions: [] });
  });
});

describe('crankMachineGraph', () => {
  it('includes the eventless transitions that toJSON() leaves out, with their guards', () => {
    const { transitions } = crankMachineGraph();
    expect(transitions).toContainEqual({
      source: 'crank.ack_deposit.failed',
      target: 'crank.ack_deposit.retry-backoff',
      event: 'always',
      guard: 'and(isRetryableFailure, hasAttemptsLeft)',
    });
    expect(transitions).toContainEqual({ source: 'crank.finishing', target: 'crank.idle', event: 'always', guard: null });
    expect(transitions).toContainEqual({ source: 'crank.idle', target: 'crank.polling', event: 'CRANK_ONCE', guard: null });
  });
});
