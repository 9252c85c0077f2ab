import type { CrankAction, ChainSide } from '../domain.js';
import type { ForeignTransaction, RoleChange } from './rules.js';
import { STEP_ACTIONS, type CrankReport, type CrankStep } from './crank-types.js';
import type { WaitingRead } from './planning/waiting.js';

/** What the crank machine takes in, and what it tells the runtime (JSON-safe, like its context). */

export type CrankEvent =
  /** Start a cycle now if none runs; dropped (coalesced) while one runs. */
  | { type: 'POLL' }
  /** Run a cycle for this request and answer it with that cycle's report (queued while one runs). */
  | { type: 'CRANK_ONCE'; requestId: string }
  /** Take no more cycles; the running one ends at its next safe point. */
  | { type: 'STOP' };

export const ATTEMPT_OUTCOMES = ['landed', 'failed', 'already_done'] as const;
type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

export const CYCLE_OUTCOMES = ['ok', 'error'] as const;

/** Emitted to the runtime, which turns them into logs, metrics and answers to requests. */
export type CrankEmitted =
  | { type: 'cycleStarted'; atMs: number; requests: string[] }
  | { type: 'planned'; pending: Record<CrankAction, number>; waiting: WaitingRead; readAtMs: number }
  /** Transactions signed by this authority's key that this process did not sign, new at this read. */
  | { type: 'foreignSigner'; transactions: ForeignTransaction[]; halted: boolean }
  /** The authority cannot pay this plan's fees on `chain`: its actions there are skipped. */
  | { type: 'feesShort'; chain: ChainSide; balance: number; need: number }
  /** This instance stood by (another one signs) or took over (the other one went quiet for the window). */
  | { type: 'roleChanged'; change: RoleChange; quietWindowMs: number }
  | { type: 'readFailed'; error: string }
  | {
      type: 'attempt';
      action: CrankAction;
      attempt: number;
      outcome: AttemptOutcome;
      indices: number[];
      signatures: string[];
      error: string | null;
      /** A failed attempt that will be retried after a backoff. */
      willRetry: boolean;
      atMs: number;
      durationMs: number;
    }
  | { type: 'cycleFinished'; outcome: (typeof CYCLE_OUTCOMES)[number]; report: CrankReport; requests: string[]; atMs: number; durationMs: number }
  | { type: 'requestsAbandoned'; requests: string[] }
  | { type: 'pollCoalesced' }
  /** Dry run: what the action would have submitted; nothing was sent. */
  | { type: 'dryRunPlanned'; action: CrankAction; indices: number[]; votes: PlannedVote[] };

/** A vote as a dry run logs it: the entry and its direction (approve = yes). */
export interface PlannedVote {
  index: number;
  approve: boolean;
}

type AttemptEvent = Extract<CrankEmitted, { type: 'attempt' }>;

/** An `attempt` event of `step`; what `details` leaves out is empty (no indices, signatures, error, retry). */
export function attemptEvent(
  step: CrankStep,
  attempt: number,
  outcome: AttemptOutcome,
  details: Partial<AttemptEvent> & Pick<AttemptEvent, 'atMs' | 'durationMs'>,
): AttemptEvent {
  return {
    type: 'attempt',
    action: STEP_ACTIONS[step],
    attempt,
    outcome,
    indices: [],
    signatures: [],
    error: null,
    willRetry: false,
    ...details,
  };
}
