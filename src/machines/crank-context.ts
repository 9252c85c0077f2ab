import type {
  AckDepositVote,
  AckWithdrawVote,
  AuthorityView,
  ChainAmounts,
  LandedTransaction,
} from '../chain/bridge-chains.js';
import type { CrankConfig, ForeignSignerPolicy } from '../config/config.js';
import { isBridgeError } from '../errors.js';
import type { ChainSide, CrankAction } from '../domain.js';
import type { CrankReport } from './crank-service.js';
import { MAX_PLANNED_PER_ACTION, type CyclePlan } from './planning/cycle-plan.js';
import { initialRole, type KeyUse, type RoleChange, type RoleFacts } from './authority-role.js';
import type { WaitingRead } from './planning/waiting.js';

/**
 * The crank machine's data: settings, the current cycle's plan and bookkeeping, and the
 * health facts /health reports. JSON-serializable throughout (numbers, strings, booleans,
 * arrays): no bigint, no Error, no class instance, so that snapshots, the inspector and the
 * graph tools can all handle it.
 */

/** The action steps of a cycle, in SPEC §3 order; each is a state of the machine. */
export type CrankStep = 'ack_deposit' | 'ack_withdraw' | 'cleanup';

/** The protocol name of each step, as logs and metric labels use it. */
export const STEP_ACTIONS: Readonly<Record<CrankStep, CrankAction>> = {
  ack_deposit: 'ack_deposit',
  ack_withdraw: 'ack_withdraw',
  cleanup: 'cleanup_deposit',
};

/**
 * Consecutive back-to-back cycles a backlog may trigger before the crank waits one poll
 * interval again; bounds how long one burst keeps the RPC endpoints busy (docs/crank.md).
 */
export const MAX_BACKLOG_CYCLES = 10;

/**
 * The settings the machine reads: its share of CrankConfig, taken whole from the configuration
 * (the field comments there say what each is), plus the bounds the crank fixes itself.
 */
export interface CrankSettings extends ConfiguredCrankSettings {
  /** Votes (or cleanups) per action per cycle. */
  batchLimit: number;
  /** Back-to-back cycles a backlog may trigger in a row. */
  maxBacklogCycles: number;
}

/** The machine's share of CrankConfig; a test's settings are a CrankConfig too (one value from configuration to machine). */
export type ConfiguredCrankSettings = Pick<
  CrankConfig,
  'pollIntervalMs' | 'maxAttempts' | 'retryBackoffMs' | 'onForeignSigner' | 'minBalanceLamports' | 'dryRun' | 'handoffMs'
>;

export type { ForeignSignerPolicy };

/** Picks the machine's fields (the context stays JSON: nothing else of the configuration rides along). */
export function crankSettings(configured: ConfiguredCrankSettings): CrankSettings {
  return {
    pollIntervalMs: configured.pollIntervalMs,
    maxAttempts: configured.maxAttempts,
    retryBackoffMs: configured.retryBackoffMs,
    batchLimit: MAX_PLANNED_PER_ACTION,
    maxBacklogCycles: MAX_BACKLOG_CYCLES,
    onForeignSigner: configured.onForeignSigner,
    minBalanceLamports: configured.minBalanceLamports,
    dryRun: configured.dryRun,
    handoffMs: configured.handoffMs,
  };
}

/** What /health shows (times in unix milliseconds here; the service converts to seconds). */
export interface HealthFacts {
  lastRunAtMs: number | null;
  lastSuccessAtMs: number | null;
  lastError: string | null;
  lastAction: string | null;
  /** Transactions signed by this authority that landed (SPEC total_actions_submitted). */
  transactionsLanded: number;
  lastCycleFinishedAtMs: number | null;
  /** Per chain at the latest read: the authority's balance and the fees the plan needed. */
  fees: ChainFees | null;
  /** The latest transaction signed by this authority's key that this process did not sign, while it was active. */
  foreignSigner: ForeignTransaction | null;
  /** Active or standby, and the other signer a standby watches (authority-role.ts). */
  role: RoleFacts;
}

interface FeeFacts {
  balance: number;
  need: number;
}

export type ChainFees = Record<ChainSide, FeeFacts>;

export interface ForeignTransaction extends KeyUse {
  seenAtMs: number;
}

/** What the read step returns: the plan, and what it learned about the authority's own accounts. */
export interface CycleRead {
  plan: CyclePlan;
  authority: AuthorityView;
  /** Lamports the plan's transactions would pay, per chain. */
  fees: ChainAmounts;
  /** How long the plan's work has waited, in slots at the read. */
  waiting: WaitingRead;
  /** Monotonic milliseconds (performance.now()) when the trackers' read returned. */
  readAtMs: number;
}

export interface CycleState {
  startedAtMs: number;
  /** CRANK_ONCE requests this cycle answers. */
  requests: string[];
  /** An action failed after all its attempts, or the tracker read failed. */
  failed: boolean;
  attempted: Record<CrankStep, boolean>;
  /** Distinct entries cleanup_deposit was submitted for. */
  cleanupSubmitted: number[];
  /** Of those and any others, entries found cleaned up (by us or already by someone else). */
  cleanupResolved: number[];
}

/** The running action's attempts. */
export interface ActionProgress {
  /** 1-based number of the current attempt. */
  attempt: number;
  attemptStartedAtMs: number;
  /** Entry indices the current attempt submits (empty while it re-reads). */
  submitted: number[];
  /** Why the current attempt failed, as data (the error object itself stays out of context). */
  failure: AttemptFailure | null;
}

interface AttemptFailure {
  error: string;
  retryable: boolean;
  /** Transactions of the attempt that landed before it failed. */
  landedSignatures: string[];
}

export interface CrankContext {
  settings: CrankSettings;
  /** The latest plan: from the cycle's read, replaced by the re-read of a retry. */
  plan: CyclePlan | null;
  cycle: CycleState | null;
  progress: ActionProgress;
  /** CRANK_ONCE requests that arrived during a cycle, for the next one. */
  queuedRequests: string[];
  idleWaitedMs: number;
  drainBacklog: boolean;
  backlogStreak: number;
  stopRequested: boolean;
  health: HealthFacts;
}

export type CrankEvent =
  /** Start a cycle now if none runs; dropped (coalesced) while one runs. */
  | { type: 'POLL' }
  /** Run a cycle for this request and answer it with that cycle's report (queued while one runs). */
  | { type: 'CRANK_ONCE'; requestId: string }
  /** Take no more cycles; the running one ends at its next safe point. */
  | { type: 'STOP' };

type AttemptOutcome = 'landed' | 'failed' | 'already_done';

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
  | { type: 'cycleFinished'; outcome: 'ok' | 'error'; report: CrankReport; requests: string[]; atMs: number; durationMs: number }
  | { type: 'requestsAbandoned'; requests: string[] }
  | { type: 'pollCoalesced' }
  /** Dry run: what the action would have submitted; nothing was sent. */
  | { type: 'dryRunPlanned'; action: CrankAction; indices: number[]; votes: PlannedVote[] };

/** A vote as a dry run logs it: the entry and its direction (approve = yes). */
export interface PlannedVote {
  index: number;
  approve: boolean;
}

/** What the submit actor sends, per step. */
export type Submission =
  | { step: 'ack_deposit'; votes: AckDepositVote[] }
  | { step: 'ack_withdraw'; votes: AckWithdrawVote[] }
  | { step: 'cleanup'; indices: number[] };

/** What the submit actor reports, the same shape for every step. */
export interface ActionReport {
  transactions: LandedTransaction[];
  /** cleanup_deposit only: entries this server cleaned up. */
  completed: number[];
  /** cleanup_deposit only: entries someone else had cleaned up already. */
  alreadyDone: number[];
}

export function initialCrankContext(settings: CrankSettings): CrankContext {
  return {
    settings,
    plan: null,
    cycle: null,
    progress: freshProgress(),
    queuedRequests: [],
    idleWaitedMs: 0,
    drainBacklog: false,
    backlogStreak: 0,
    stopRequested: false,
    health: {
      lastRunAtMs: null,
      lastSuccessAtMs: null,
      lastError: null,
      lastAction: null,
      transactionsLanded: 0,
      lastCycleFinishedAtMs: null,
      fees: null,
      foreignSigner: null,
      role: initialRole(settings),
    },
  };
}

/** Before an action's first attempt. */
export function freshProgress(): ActionProgress {
  return { attempt: 1, attemptStartedAtMs: 0, submitted: [], failure: null };
}

export function newCycle(startedAtMs: number, requests: string[]): CycleState {
  return {
    startedAtMs,
    requests,
    failed: false,
    attempted: { ack_deposit: false, ack_withdraw: false, cleanup: false },
    cleanupSubmitted: [],
    cleanupResolved: [],
  };
}

/** The step's work in the plan, as the submit actor takes it. */
export function submissionFor(step: CrankStep, plan: CyclePlan | null): Submission {
  switch (step) {
    case 'ack_deposit':
      return { step, votes: plan?.ackDeposit.votes ?? [] };
    case 'ack_withdraw':
      return { step, votes: plan?.ackWithdraw.votes.map((planned) => planned.vote) ?? [] };
    case 'cleanup':
      return { step, indices: plan?.cleanup.indices ?? [] };
  }
}

export function plannedVotes(submission: Submission): PlannedVote[] {
  return submission.step === 'cleanup' ? [] : submission.votes.map(({ index, approve }) => ({ index, approve }));
}

export function submittedIndices(submission: Submission): number[] {
  return submission.step === 'cleanup' ? submission.indices : submission.votes.map((vote) => vote.index);
}

export function pendingCounts(plan: CyclePlan): Record<CrankAction, number> {
  return {
    ack_deposit: plan.ackDeposit.pending,
    ack_withdraw: plan.ackWithdraw.pending,
    cleanup_deposit: plan.cleanup.pending,
  };
}

export function cycleReport(cycle: CycleState): CrankReport {
  return {
    ack_deposit_attempted: cycle.attempted.ack_deposit,
    ack_withdraw_attempted: cycle.attempted.ack_withdraw,
    cleanup_attempted: cycle.cleanupSubmitted.length,
    cleanup_completed: cycle.cleanupResolved.length,
  };
}

/** Sorted union of two index lists. */
export function unionIndices(a: readonly number[], b: readonly number[]): number[] {
  return [...new Set([...a, ...b])].sort((x, y) => x - y);
}

/**
 * Transactions of a failed action that landed (CHAIN__FAILED_TO_SUBMIT): those that landed
 * before the failure and, when the failure is a transaction that landed with an error
 * (outcome `landed_with_error`, naming its signature), that one too: it is on chain and its fee
 * was paid. An `unknown` outcome's signature is a transaction that may still land.
 */
export function landedSignaturesOf(error: unknown): string[] {
  if (!isBridgeError(error, 'CHAIN__FAILED_TO_SUBMIT')) return [];
  const { landedSignatures, signature } = error.context;
  if (error.context.outcome !== 'landed_with_error' || signature === undefined || landedSignatures.includes(signature)) return landedSignatures;
  return [...landedSignatures, signature];
}
