import type {
  AuthorityView,
  ChainAmounts,
  AckDepositVote,
  AckWithdrawVote,
  LandedTransaction,
  LeaseObservation,
} from '../chain/port/bridge-chains.js';
import type { CrankAction } from '../domain.js';
import type { CrankConfig } from '../config/config.js';
import type { CrankReport, CrankStep, CycleKind, PlannedVote } from './crank-types.js';
import type { HealthFacts } from './health.js';
import { hasBacklog, MAX_PLANNED_PER_ACTION, type CyclePlan } from './planning/cycle-plan.js';
import type { CleanupWait } from './planning/cleanup-turns.js';
import { initialLease } from './lease.js';
import { initialRole, isHalted } from './role.js';
import type { WaitingRead } from './planning/waiting.js';
import type { PollSchedule } from './delays.js';

/**
 * The crank machine's data: its settings, the current cycle's plan and
 * attempts, and the health facts /health reports (health.ts); below, what a step hands
 * its one effect of writing (the submit actor) and what it gets back. JSON-serializable
 * throughout (numbers, strings, booleans, arrays): no bigint, no Error, no class instance, so
 * that snapshots, the inspector and the graph tools can all handle it.
 */

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

/** Placeholders that fail loudly: the machine's definition must load without a chain client. */
export function unprovided(name: string) {
  return () => Promise.reject(new Error(`the crank machine's ${name} actor was not provided: run the machine through startCrank()`));
}

export function pollSchedule(context: CrankContext): PollSchedule {
  return {
    pollIntervalMs: context.settings.pollIntervalMs,
    idleWaitedMs: context.idleWaitedMs,
    drainBacklog: context.drainBacklog,
  };
}

/** The read step's input from the machine's context. */
export function readInput({ context }: { context: CrankContext }): ReadInput {
  const { settings, health, cleanupWaits } = context;
  return { batchLimit: settings.batchLimit, readLease: health.lease.status !== 'off', cleanupWaits };
}

/** What the read step takes. */
export interface ReadInput {
  batchLimit: number;
  /** Read the signing lease too (it is in use: lease.ts). */
  readLease: boolean;
  /** Cleanups of another authority's turn at the last read, with their reads (planning/cleanup-turns.ts). */
  cleanupWaits: CleanupWait[];
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
  /** The signing lease at this read (ReadInput.readLease). */
  lease?: LeaseObservation;
  /** Every chain lands in nonce mode (the nonces are the signal of another signer: role.ts). */
  nonceSignal: boolean;
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
  /**
   * The latest failed attempt of this action ("attempt 1 of 3 failed: ..."), kept through the
   * backoff and the next attempt until one lands or the action fails: /health is degraded from
   * the first failed attempt, not only during the backoff.
   */
  lastFailure: string | null;
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
  /** Cleanups of another authority's turn, with the reads that showed each, from the last read (planning/cleanup-turns.ts). */
  cleanupWaits: CleanupWait[];
  health: HealthFacts;
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
    cleanupWaits: [],
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
      lease: initialLease(settings),
      unlandedSinceMs: null,
    },
  };
}

/** Before an action's first attempt. */
export function freshProgress(): ActionProgress {
  return { attempt: 1, attemptStartedAtMs: 0, submitted: [], failure: null, lastFailure: null };
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

/** The cycle after `step` started an attempt that submits `submitted`. */
export function attemptedIn(cycle: CycleState, step: CrankStep, submitted: readonly number[]): CycleState {
  return {
    ...cycle,
    attempted: { ...cycle.attempted, [step]: true },
    cleanupSubmitted: step === 'cleanup' ? unionIndices(cycle.cleanupSubmitted, submitted) : cycle.cleanupSubmitted,
  };
}

/** Whether the cycle started an attempt of any action (a dry run's plans are none). */
function submittedAny(cycle: CycleState): boolean {
  return Object.values(cycle.attempted).some(Boolean);
}

/**
 * Whether the next cycle starts at once, to drain a backlog: at most maxBacklogCycles in a row,
 * and only after a cycle that submitted, since only such a cycle can shrink one (one that stood
 * by, halted, dry-ran or lacked fees would read the same entries again at once).
 */
export function drainsBacklog({ plan, backlogStreak, settings }: CrankContext, cycle: CycleState): boolean {
  const backlog = submittedAny(cycle) && !cycle.failed && plan !== null && hasBacklog(plan);
  return backlog && backlogStreak < settings.maxBacklogCycles;
}

export function cycleKind({ settings, health }: CrankContext): CycleKind {
  if (settings.dryRun) return 'dry_run';
  if (isHalted(settings.onForeignSigner, health.foreignSigner)) return 'halted';
  return health.role.role;
}

/** What the cycle answers to the POST /crank/once requests it serves (SPEC §2.3). */
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

export function pendingCounts(plan: CyclePlan): Record<CrankAction, number> {
  return {
    ack_deposit: plan.ackDeposit.pending,
    ack_withdraw: plan.ackWithdraw.pending,
    cleanup_deposit: plan.cleanup.pending,
  };
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
