import type { StateValue } from 'xstate';
import type { CrankEmitted } from './crank-types.js';

/**
 * What the crank is doing now and did last, for GET /crank/ui: the machine's current state
 * and the most recent cycles and action attempts, fed from the snapshots and the events the
 * machine emits. Bounded: CRANK_CYCLE_HISTORY cycles and CRANK_ACTION_HISTORY actions, oldest
 * dropped first. Readers take snapshots (the page polls); nothing a reader does reaches the crank.
 */

export const CRANK_CYCLE_HISTORY = 20;
export const CRANK_ACTION_HISTORY = 50;

type AttemptEvent = Extract<CrankEmitted, { type: 'attempt' }>;
type CycleFinishedEvent = Extract<CrankEmitted, { type: 'cycleFinished' }>;

type CycleActivity = Omit<CycleFinishedEvent, 'type' | 'requests'>;

/** An action attempt as emitted; `read` when the tracker read of a cycle failed. */
type ActionActivity = Omit<AttemptEvent, 'type' | 'action'> & { action: AttemptEvent['action'] | 'read' };

interface CrankActivitySnapshot {
  /** Active state ids, outermost first (`crank.ack_deposit`, `crank.ack_deposit.submitting`); empty while the crank is disabled. */
  state: string[];
  /** Newest first. */
  cycles: CycleActivity[];
  /** Newest first. */
  actions: ActionActivity[];
}

export interface CrankActivity {
  snapshot(): CrankActivitySnapshot;
}

export interface CrankActivityLog extends CrankActivity {
  recordState(value: StateValue): void;
  record(emitted: CrankEmitted): void;
}

export function createCrankActivityLog(machineId = 'crank'): CrankActivityLog {
  let state: string[] = [];
  let cycles: CycleActivity[] = [];
  let actions: ActionActivity[] = [];
  return {
    snapshot: () => ({ state: [...state], cycles: [...cycles], actions: [...actions] }),
    recordState(value) {
      state = activeStateIds(value, machineId);
    },
    record(emitted) {
      if (emitted.type === 'cycleFinished') {
        const { outcome, kind, durationMs, report, atMs } = emitted;
        cycles = [{ atMs, outcome, kind, durationMs, report }, ...cycles].slice(0, CRANK_CYCLE_HISTORY);
      } else if (emitted.type === 'attempt' || emitted.type === 'readFailed') {
        actions = [actionActivity(emitted), ...actions].slice(0, CRANK_ACTION_HISTORY);
      }
    },
  };
}

function actionActivity(emitted: Extract<CrankEmitted, { type: 'attempt' | 'readFailed' }>): ActionActivity {
  if (emitted.type === 'readFailed') {
    return {
      atMs: Date.now(),
      action: 'read',
      attempt: 1,
      outcome: 'failed',
      indices: [],
      signatures: [],
      error: emitted.error,
      willRetry: false,
      durationMs: 0,
    };
  }
  const { atMs, action, attempt, outcome, indices, signatures, error, willRetry, durationMs } = emitted;
  return { atMs, action, attempt, outcome, indices, signatures, error, willRetry, durationMs };
}

/** `{ ack_deposit: 'submitting' }` -> `['crank.ack_deposit', 'crank.ack_deposit.submitting']`. */
export function activeStateIds(value: StateValue, prefix: string): string[] {
  if (typeof value === 'string') return [`${prefix}.${value}`];
  return Object.entries(value).flatMap(([key, child]) => {
    const id = `${prefix}.${key}`;
    return child === undefined ? [id] : [id, ...activeStateIds(child, id)];
  });
}
