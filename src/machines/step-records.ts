import { describeError } from '../errors.js';
import { boundText } from '../text.js';
import type { CrankAction } from '../domain.js';
import {
  newCycle,
  type CrankContext,
  type CycleRead,
  type CycleState,
  plannedVotes,
  submissionFor,
  submittedIndices,
  type ActionReport,
} from './crank-context.js';
import type { CrankEmitted } from './crank-events.js';
import { STEP_ACTIONS, type CrankReport, type CrankStep } from './crank-types.js';
import { landedSignaturesOf } from './landed-signatures.js';
import { afterUnknownHistory, chainsShortOfFees, feeFacts, foreignTransactions, isHalted, quietWindowMs, roleAfterRead } from './rules.js';
import { retriesAction } from '../failure-policy.js';
import { hasBacklog, type CyclePlan } from './planning/cycle-plan.js';

/**
 * What each step of the machine records: pure functions from the context (and the time) to a
 * context update and the events to emit, every one of the same `{ update, emit }` shape. The
 * machine (crank-machine.ts) applies each through one helper, `record`.
 */

export interface StepRecord {
  update: Partial<CrankContext>;
  emit: CrankEmitted[];
}

type AttemptEvent = Extract<CrankEmitted, { type: 'attempt' }>;

/**
 * Cap of an error as /health's last_error and the crank's log lines quote it. Our own messages
 * (account, variable, what to do) stay well below it; foreign text inside them was already cut
 * to 256 characters where it entered (src/chain/rpc/rpc-failure.ts). This is the second line.
 */
export const MAX_ERROR_CHARS = 1024;

function errorText(error: unknown): string {
  return boundText(describeError(error), MAX_ERROR_CHARS);
}

export function cycleStarted(context: CrankContext, atMs: number): StepRecord {
  const requests = context.queuedRequests;
  return {
    update: { cycle: newCycle(atMs, requests), queuedRequests: [], plan: null, health: { ...context.health, lastRunAtMs: atMs } },
    emit: [{ type: 'cycleStarted', atMs, requests }],
  };
}

/**
 * The plan, the fee balances, and any transaction another process signed with this key: a
 * second signer while this instance is active, the instance it stands by for while it is a
 * standby (rules.ts).
 */
export function readRecorded(context: CrankContext, read: CycleRead, atMs: number): StepRecord {
  const { settings } = context;
  const role = afterUnknownHistory(context.health.role, read.authority, atMs);
  const decision = roleAfterRead(role, foreignTransactions(read.authority, atMs), settings, atMs);
  const { foreign, change } = decision;
  const fees = feeFacts(read.authority, read.fees);
  const foreignSigner = foreign[0] ?? context.health.foreignSigner;
  const emit: CrankEmitted[] = [{ type: 'planned', pending: pendingCounts(read.plan), waiting: read.waiting, readAtMs: read.readAtMs }];
  if (foreign.length > 0) emit.push({ type: 'foreignSigner', transactions: foreign, halted: isHalted(settings.onForeignSigner, foreignSigner) });
  if (change !== null) emit.push({ type: 'roleChanged', change, quietWindowMs: quietWindowMs(settings.pollIntervalMs) });
  for (const chain of chainsShortOfFees(fees)) emit.push({ type: 'feesShort', chain, ...fees[chain] });
  return { update: { plan: read.plan, health: { ...context.health, fees, foreignSigner, role: decision.facts } }, emit };
}

export function readFailed(context: CrankContext, error: unknown): StepRecord {
  const message = errorText(error);
  return {
    update: {
      cycle: context.cycle && { ...context.cycle, failed: true },
      health: { ...context.health, lastError: `reading the trackers failed: ${message}` },
    },
    emit: [{ type: 'readFailed', error: message }],
  };
}

/** Submitting starts: the cycle has now attempted this action. */
export function attemptStarted(context: CrankContext, step: CrankStep, atMs: number): StepRecord {
  const submitted = submittedIndices(submissionFor(step, context.plan));
  const cycle = context.cycle && {
    ...context.cycle,
    attempted: { ...context.cycle.attempted, [step]: true },
    cleanupSubmitted: step === 'cleanup' ? unionIndices(context.cycle.cleanupSubmitted, submitted) : context.cycle.cleanupSubmitted,
  };
  return { update: { cycle, progress: { ...context.progress, attemptStartedAtMs: atMs, submitted, failure: null } }, emit: [] };
}

/** A retry starts with a fresh read. */
export function rereadStarted(context: CrankContext, atMs: number): StepRecord {
  const progress = { ...context.progress, attempt: context.progress.attempt + 1, attemptStartedAtMs: atMs, submitted: [], failure: null };
  return { update: { progress }, emit: [] };
}

export function attemptLanded(context: CrankContext, step: CrankStep, report: ActionReport, atMs: number): StepRecord {
  const { attempt, attemptStartedAtMs, submitted } = context.progress;
  const signatures = report.transactions.map((transaction) => transaction.signature);
  return {
    update: {
      cycle: context.cycle && {
        ...context.cycle,
        cleanupResolved: unionIndices(context.cycle.cleanupResolved, [...report.completed, ...report.alreadyDone]),
      },
      health: {
        ...context.health,
        transactionsLanded: context.health.transactionsLanded + signatures.length,
        lastSuccessAtMs: atMs,
        lastAction: describeLanded(step, submitted, report),
      },
    },
    emit: [
      attemptEvent(step, attempt, signatures.length > 0 ? 'landed' : 'already_done', {
        indices: submitted,
        signatures,
        atMs,
        durationMs: atMs - attemptStartedAtMs,
      }),
    ],
  };
}

/**
 * Dry run: the action's plan is logged instead of submitted. Nothing landed, so neither
 * last_success_at nor the landed count moves; last_action says what was planned.
 */
export function dryRunRecorded(context: CrankContext, step: CrankStep): StepRecord {
  const submission = submissionFor(step, context.plan);
  const indices = submittedIndices(submission);
  return {
    update: { health: { ...context.health, lastAction: describePlanned(step, indices) } },
    emit: [{ type: 'dryRunPlanned', action: STEP_ACTIONS[step], indices, votes: plannedVotes(submission) }],
  };
}

/** The failure as data; transactions that landed before it count as submitted. */
export function attemptFailed(context: CrankContext, error: unknown): StepRecord {
  const landedSignatures = landedSignaturesOf(error);
  return {
    update: {
      progress: {
        ...context.progress,
        failure: { error: errorText(error), retryable: retriesAction(error), landedSignatures },
      },
      health: { ...context.health, transactionsLanded: context.health.transactionsLanded + landedSignatures.length },
    },
    emit: [],
  };
}

/** The failed attempt's log line and metrics, once the machine knows whether it will retry. */
export function failedAttemptReported(context: CrankContext, step: CrankStep, willRetry: boolean, atMs: number): StepRecord {
  const { attempt, attemptStartedAtMs, submitted, failure } = context.progress;
  const event = attemptEvent(step, attempt, 'failed', {
    indices: submitted,
    signatures: failure?.landedSignatures ?? [],
    error: failure?.error ?? null,
    willRetry,
    atMs,
    durationMs: atMs - attemptStartedAtMs,
  });
  return { update: {}, emit: [event] };
}

/** All attempts used (or the failure cannot be retried): the cycle has failed, SPEC §3. */
export function actionFailed(context: CrankContext, step: CrankStep): StepRecord {
  const { attempt, submitted, failure } = context.progress;
  const failed = describeFailed(step, submitted, attempt);
  return {
    update: {
      cycle: context.cycle && { ...context.cycle, failed: true },
      health: { ...context.health, lastAction: failed, lastError: `${failed}: ${failure?.error ?? 'unknown error'}` },
    },
    emit: [],
  };
}

/** A retry's re-read found nothing left to submit: the earlier attempt's work got done after all. */
export function actionResolved(context: CrankContext, step: CrankStep, atMs: number): StepRecord {
  const { attempt, attemptStartedAtMs } = context.progress;
  if (attempt === 1) return { update: {}, emit: [] };
  return { update: {}, emit: [attemptEvent(step, attempt, 'already_done', { atMs, durationMs: atMs - attemptStartedAtMs })] };
}

export function cycleFinished(context: CrankContext, atMs: number): StepRecord {
  const { cycle, plan, settings } = context;
  if (cycle === null) return { update: {}, emit: [] };
  // A dry run's backlog never drains: it must not trigger back-to-back cycles.
  const backlog = !settings.dryRun && !cycle.failed && plan !== null && hasBacklog(plan);
  const drainBacklog = backlog && context.backlogStreak < settings.maxBacklogCycles;
  return {
    update: {
      cycle: null,
      plan: null,
      idleWaitedMs: 0,
      drainBacklog,
      backlogStreak: drainBacklog ? context.backlogStreak + 1 : 0,
      // SPEC §3: last_error clears only when a whole cycle completes without a failed action.
      health: { ...context.health, lastCycleFinishedAtMs: atMs, ...(cycle.failed ? {} : { lastError: null }) },
    },
    emit: [
      {
        type: 'cycleFinished',
        outcome: cycle.failed ? 'error' : 'ok',
        report: cycleReport(cycle),
        requests: cycle.requests,
        atMs,
        durationMs: atMs - cycle.startedAtMs,
      },
    ],
  };
}

/** STOP: no more cycles, so requests waiting for one are answered now. */
export function stopRequested(context: CrankContext): StepRecord {
  const requests = context.queuedRequests;
  return {
    update: { stopRequested: true, queuedRequests: [] },
    emit: requests.length > 0 ? [{ type: 'requestsAbandoned', requests }] : [],
  };
}

/** Stopped mid-cycle: that cycle's requests get no report. */
export function cycleAbandoned(context: CrankContext): StepRecord {
  const requests = [...(context.cycle?.requests ?? []), ...context.queuedRequests];
  return {
    update: { cycle: null, queuedRequests: [] },
    emit: requests.length > 0 ? [{ type: 'requestsAbandoned', requests }] : [],
  };
}

function attemptEvent(
  step: CrankStep,
  attempt: number,
  outcome: AttemptEvent['outcome'],
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

function pendingCounts(plan: CyclePlan): Record<CrankAction, number> {
  return {
    ack_deposit: plan.ackDeposit.pending,
    ack_withdraw: plan.ackWithdraw.pending,
    cleanup_deposit: plan.cleanup.pending,
  };
}

function cycleReport(cycle: CycleState): CrankReport {
  return {
    ack_deposit_attempted: cycle.attempted.ack_deposit,
    ack_withdraw_attempted: cycle.attempted.ack_withdraw,
    cleanup_attempted: cycle.cleanupSubmitted.length,
    cleanup_completed: cycle.cleanupResolved.length,
  };
}

/** Sorted union of two index lists. */
function unionIndices(a: readonly number[], b: readonly number[]): number[] {
  return [...new Set([...a, ...b])].sort((x, y) => x - y);
}

/**
 * The human-readable `crank.last_action` lines, e.g. "ack_deposit 120..129 (10 votes)",
 * "cleanup_deposit 4 entries (1 already done)", "ack_withdraw 7 (1 vote) failed after 3 attempts",
 * and in a dry run "dry run: ack_deposit 120..129 (10 votes) planned, not submitted".
 */

export function describeLanded(step: CrankStep, indices: readonly number[], report: ActionReport): string {
  const head = describeSubmission(step, indices);
  const alreadyDone = report.alreadyDone.length;
  return step === 'cleanup' && alreadyDone > 0 ? `${head} (${alreadyDone} already done)` : head;
}

export function describeFailed(step: CrankStep, indices: readonly number[], attempts: number): string {
  return `${describeSubmission(step, indices)} failed after ${plural(attempts, 'attempt')}`;
}

/** Dry run: "dry run: ack_deposit 120..129 (10 votes) planned, not submitted". */
function describePlanned(step: CrankStep, indices: readonly number[]): string {
  return `dry run: ${describeSubmission(step, indices)} planned, not submitted`;
}

function describeSubmission(step: CrankStep, indices: readonly number[]): string {
  const action = STEP_ACTIONS[step];
  if (indices.length === 0) return action;
  if (step === 'cleanup') return `${action} ${plural(indices.length, 'entry', 'entries')}`;
  return `${action} ${describeRange(indices)} (${plural(indices.length, 'vote')})`;
}

/** Votes are consecutive by construction: "120..129", or "120" for one. */
function describeRange(indices: readonly number[]): string {
  const first = indices[0];
  const last = indices[indices.length - 1];
  return first === last ? `${first}` : `${first}..${last}`;
}

function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}
