import * as z from 'zod';
import type { ChainSide, CrankAction } from '../domain.js';
import type { WaitingRead } from './planning/waiting.js';
import type { LeaseStepOutcome } from './lease.js';
import { CRANK_ROLES, type ForeignTransaction, type RoleChange, type WaitReason } from './role.js';

/**
 * The words every part of the crank shares: its steps, the events the machine takes in and
 * emits, and the answers it gives over POST /crank/* (/health's is health.ts's). Of the crank it
 * imports only role.ts and the waiting read's type, so the machine, its data, its telemetry and
 * the HTTP service can all use it without importing one another.
 */

/** The action steps of a cycle, in SPEC §3 order; each is a state of the machine. */
export type CrankStep = 'ack_deposit' | 'ack_withdraw' | 'cleanup';

/** The protocol name of each step, as logs and metric labels use it. */
export const STEP_ACTIONS: Readonly<Record<CrankStep, CrankAction>> = {
  ack_deposit: 'ack_deposit',
  ack_withdraw: 'ack_withdraw',
  cleanup: 'cleanup_deposit',
};

/** Where each step's transactions land, and so who pays their fees. */
export const STEP_CHAINS: Readonly<Record<CrankStep, ChainSide>> = {
  ack_deposit: 'target',
  ack_withdraw: 'source',
  cleanup: 'source',
};

/**
 * The answers the crank gives over POST /crank/*, each declared once as a zod schema: its TypeScript type
 * is inferred from it, and src/http/schemas.ts turns it into the JSON Schema fastify serializes
 * with, so a response carries exactly these fields in the wire's snake_case.
 */

/** CrankReportResponse (SPEC §2.3): the type and the HTTP response schema from this one definition. */
export const crankReportSchema = z.strictObject({
  ack_deposit_attempted: z.boolean(),
  ack_withdraw_attempted: z.boolean(),
  cleanup_attempted: z.int(),
  cleanup_completed: z.int(),
});
export type CrankReport = z.infer<typeof crankReportSchema>;

/**
 * The role beside POST /crank/once's report, POST /crank/poll's outcome and GET /crank/activity
 * (docs/crank.md, "Role"): an extension beside SPEC §2.3's fields, so that a standby's report of
 * nothing attempted is not read as a bridge with no work.
 */
export const crankRoleViewSchema = z.strictObject({
  role: z.enum(CRANK_ROLES),
  /** Standby only: unix seconds (rounded up) from which it may sign, if no other instance signs first. */
  may_sign_at: z.int().optional(),
});
export type CrankRoleView = z.infer<typeof crankRoleViewSchema>;

/** `started`: the crank was idle and a cycle began; `coalesced`: a cycle was already running. */
export const crankPollOutcomeSchema = z.enum(['started', 'coalesced']);
export type CrankPollOutcome = z.infer<typeof crankPollOutcomeSchema>;

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

/** A cycle as the crank page marks it: only an `active` one may submit; the others read and plan. */
export type CycleKind = 'active' | 'standby' | 'halted' | 'dry_run';

/** Emitted to the runtime, which turns them into logs, metrics and answers to requests. */
export type CrankEmitted =
  | { type: 'cycleStarted'; atMs: number; requests: string[] }
  | { type: 'planned'; pending: Record<CrankAction, number>; waiting: WaitingRead; readAtMs: number }
  /** Transactions signed by this authority's key that this process did not sign, new at this read. */
  | { type: 'foreignSigner'; transactions: ForeignTransaction[]; halted: boolean }
  /** The authority cannot pay this plan's fees on `chain`: its actions there are skipped. */
  | { type: 'feesShort'; chain: ChainSide; balance: number; need: number }
  /** The balance on `chain` fell below BRIDGE_MIN_BALANCE_LAMPORTS at this read (once per fall, not every cycle). */
  | { type: 'balanceLow'; chain: ChainSide; balance: number; minimum: number }
  /** A standby has now watched another instance sign for longer than BRIDGE_HANDOFF_SECS (once per stretch): `problem` says so. */
  | { type: 'twinStays'; problem: string }
  /** This instance stood by (another one signs) or took over (the other one went quiet for the window). */
  | { type: 'roleChanged'; change: RoleChange; quietWindowMs: number }
  /** A standby's quiet window started again on history left unchecked; `firstOfStretch`: the first time since it last saw a signer or took over. */
  | { type: 'standbyWaits'; reason: WaitReason; firstOfStretch: boolean; mayTakeOverAtMs: number }
  /** What the leasing step found (lease.ts), or why it failed. */
  | { type: 'leaseStep'; outcome: LeaseStepOutcome }
  | { type: 'leaseStepFailed'; error: string }
  /** `behindFloor`: every node tried was behind the slot the server rests on (failure-policy.ts isBehindSlotFloor). */
  | { type: 'readFailed'; error: string; behindFloor: boolean }
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
  | {
      type: 'cycleFinished';
      outcome: (typeof CYCLE_OUTCOMES)[number];
      kind: CycleKind;
      report: CrankReport;
      requests: string[];
      atMs: number;
      durationMs: number;
    }
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
