import type { StateValue } from 'xstate';
import type { CrankAction } from '../metrics/metrics.js';
import type { AttemptOutcome, CrankEmitted } from './crank-context.js';
import type { CrankReport } from './crank-service.js';

/**
 * What the crank is doing now and did last, for GET /crank/ui: the machine's current state
 * and the most recent cycles and action attempts, fed from the snapshots and the events the
 * machine emits. Bounded: CRANK_CYCLE_HISTORY cycles and CRANK_ACTION_HISTORY actions, oldest
 * dropped first. Listeners hear every change; a listener that throws is dropped, so that a
 * broken reader never reaches the crank.
 */

export const CRANK_CYCLE_HISTORY = 20;
export const CRANK_ACTION_HISTORY = 50;

export interface CycleActivity {
  atMs: number;
  outcome: 'ok' | 'error';
  durationMs: number;
  report: CrankReport;
}

export interface ActionActivity {
  atMs: number;
  /** `read`: the tracker read of a cycle failed. */
  action: CrankAction | 'read';
  attempt: number;
  outcome: AttemptOutcome;
  indices: number[];
  signatures: string[];
  error: string | null;
  willRetry: boolean;
  durationMs: number;
}

export interface CrankActivitySnapshot {
  /** Active state ids, outermost first (`crank.ackDeposit`, `crank.ackDeposit.submitting`); empty while the crank is disabled. */
  state: string[];
  /** Newest first. */
  cycles: CycleActivity[];
  /** Newest first. */
  actions: ActionActivity[];
}

export type CrankActivityListener = (snapshot: CrankActivitySnapshot) => void;

export interface CrankActivity {
  snapshot(): CrankActivitySnapshot;
  /** Returns the unsubscribe function. */
  subscribe(listener: CrankActivityListener): () => void;
}

export interface CrankActivityLog extends CrankActivity {
  recordState(value: StateValue): void;
  record(emitted: CrankEmitted): void;
}

export function createCrankActivityLog(machineId = 'crank'): CrankActivityLog {
  let state: string[] = [];
  let cycles: CycleActivity[] = [];
  let actions: ActionActivity[] = [];
  const listeners = new Set<CrankActivityListener>();

  function snapshot(): CrankActivitySnapshot {
    return { state: [...state], cycles: [...cycles], actions: [...actions] };
  }

  function notify(): void {
    if (listeners.size === 0) return;
    const current = snapshot();
    for (const listener of listeners) {
      try {
        listener(current);
      } catch {
        listeners.delete(listener);
      }
    }
  }

  return {
    snapshot,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    recordState(value) {
      const next = activeStateIds(value, machineId);
      if (next.join(' ') === state.join(' ')) return;
      state = next;
      notify();
    },
    record(emitted) {
      if (emitted.type === 'cycleFinished') {
        const { outcome, durationMs, report, atMs } = emitted;
        cycles = [{ atMs, outcome, durationMs, report }, ...cycles].slice(0, CRANK_CYCLE_HISTORY);
      } else if (emitted.type === 'attempt' || emitted.type === 'readFailed') {
        actions = [actionActivity(emitted), ...actions].slice(0, CRANK_ACTION_HISTORY);
      } else {
        return;
      }
      notify();
    },
  };
}

function actionActivity(emitted: Extract<CrankEmitted, { type: 'attempt' | 'readFailed' }>): ActionActivity {
  if (emitted.type === 'readFailed') {
    return { atMs: Date.now(), action: 'read', attempt: 1, outcome: 'failed', indices: [], signatures: [], error: emitted.error, willRetry: false, durationMs: 0 };
  }
  const { atMs, action, attempt, outcome, indices, signatures, error, willRetry, durationMs } = emitted;
  return { atMs, action, attempt, outcome, indices, signatures, error, willRetry, durationMs };
}

/** `{ ackDeposit: 'submitting' }` -> `['crank.ackDeposit', 'crank.ackDeposit.submitting']`. */
export function activeStateIds(value: StateValue, prefix: string): string[] {
  if (typeof value === 'string') return [`${prefix}.${value}`];
  return Object.entries(value).flatMap(([key, child]) => {
    const id = `${prefix}.${key}`;
    return child === undefined ? [id] : [id, ...activeStateIds(child, id)];
  });
}
