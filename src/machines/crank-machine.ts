import { and, assign, emit, enqueueActions, fromPromise, not, setup } from 'xstate';
import { isBehindSlotFloor, landedSignaturesOf, retriesAction } from '../failure-policy.js';
import {
  attemptedIn,
  cycleKind,
  cycleReport,
  drainsBacklog,
  freshProgress,
  initialCrankContext,
  newCycle,
  pendingCounts,
  plannedVotes,
  pollSchedule,
  readInput,
  submissionFor,
  submittedIndices,
  unionIndices,
  unprovided,
  type ActionReport,
  type CrankContext,
  type CrankSettings,
  type CycleRead,
  type ReadInput,
  type Submission,
} from './crank-context.js';
import { describeFailed, describeLanded, describePlanned, warningsAfterRead } from './crank-telemetry.js';
import { attemptEvent, STEP_ACTIONS, type CrankEmitted, type CrankEvent, type CrankStep } from './crank-types.js';
import { crankGuards, WORK_GUARDS } from './crank-guards.js';
import { idleWaitAfterChunk, nextCycleDelay, retryBackoffDelay } from './delays.js';
import { chainsShortOfFees, errorText, retryingAttempt, unlandedSinceAfterLanding } from './health.js';
import { leaseAfterStep, leaseAfterStepFailure, type LeaseStepOutcome, type LeaseWant } from './lease.js';
import { decideAfterRead, healthAfterRead } from './read-decision.js';
import { isHalted, quietWindowMs } from './role.js';

/**
 * The crank: one cycle at a time (SPEC §1 run lock), in SPEC §3 order: read and plan, then
 * ack_deposit, ack_withdraw, cleanup_deposit, each retried with backoff up to the attempt
 * limit, then back to idle until the next poll. The machine has no I/O: effects are the
 * `readAndPlan` and `submitAction` actors, provided by startCrank (crank-service.ts); what the
 * outside world should learn (logs, metrics, answers to CRANK_ONCE) is emitted. In a dry run
 * (settings.dryRun) each action state records its plan instead of invoking submitAction.
 * docs/crank.md describes every state, event and rule.
 */

type Tag = 'busy' | 'degraded';

const now = (): number => Date.now();

const crankSetup = setup({
  types: {
    context: {} as CrankContext,
    events: {} as CrankEvent,
    input: {} as CrankSettings,
    emitted: {} as CrankEmitted,
    tags: {} as Tag,
  },
  actors: {
    readAndPlan: fromPromise<CycleRead, ReadInput>(unprovided('readAndPlan')),
    submitAction: fromPromise<ActionReport, Submission>(unprovided('submitAction')),
    keepLease: fromPromise<LeaseStepOutcome, LeaseWant>(unprovided('keepLease')),
  },
  guards: crankGuards,
  // Every write to the context is an assign, every message to the runtime an emit; a step that
  // does both from one computation (one reading of the clock, one role decision) enqueues both.
  actions: {
    queueRequest: assign({ queuedRequests: ({ context }, params: { requestId: string }) => [...context.queuedRequests, params.requestId] }),
    abandonRequest: emit((_, params: { requestId: string }) => ({ type: 'requestsAbandoned' as const, requests: [params.requestId] })),
    dropPoll: emit({ type: 'pollCoalesced' as const }),
    // STOP: no more cycles, so requests waiting for one are answered now.
    requestStop: enqueueActions(({ context, enqueue }) => {
      const requests = context.queuedRequests;
      enqueue.assign({ stopRequested: true, queuedRequests: [] });
      if (requests.length > 0) enqueue.emit({ type: 'requestsAbandoned', requests });
    }),
    waitIdleChunk: assign({ idleWaitedMs: ({ context }) => idleWaitAfterChunk(pollSchedule(context)) }),
    startCycle: enqueueActions(({ context, enqueue }) => {
      const atMs = now();
      const requests = context.queuedRequests;
      enqueue.assign({ cycle: newCycle(atMs, requests), queuedRequests: [], plan: null, health: { ...context.health, lastRunAtMs: atMs } });
      enqueue.emit({ type: 'cycleStarted', atMs, requests });
    }),
    // The plan, the fee balances, and any transaction another process signed with this key: a
    // second signer while this instance is active, the instance it stands by for while it is a
    // standby (role.ts).
    recordRead: enqueueActions(({ context, enqueue }, { read }: { read: CycleRead }) => {
      const { settings, health } = context;
      const atMs = now();
      const decided = decideAfterRead(health, read, settings, atMs);
      const { foreign, change, waits } = decided;
      const after = healthAfterRead(health, read, decided, settings, atMs);
      const { fees, foreignSigner } = after;
      enqueue.assign({ plan: read.plan, health: after, cleanupWaits: read.plan.cleanup.waits });
      enqueue.emit({ type: 'planned', pending: pendingCounts(read.plan), waiting: read.waiting, readAtMs: read.readAtMs });
      if (foreign.length > 0)
        enqueue.emit({ type: 'foreignSigner', transactions: foreign, halted: isHalted(settings.onForeignSigner, foreignSigner) });
      if (waits !== null) enqueue.emit(waits);
      if (change !== null) enqueue.emit({ type: 'roleChanged', change, quietWindowMs: quietWindowMs(settings.pollIntervalMs) });
      for (const chain of chainsShortOfFees(fees)) enqueue.emit({ type: 'feesShort', chain, ...fees[chain] });
      for (const warning of warningsAfterRead(health, after, settings)) enqueue.emit(warning);
    }),
    // The leasing step's outcome (or failure): the lease and the role it gives (lease.ts).
    recordLease: enqueueActions(({ context: { health, settings }, enqueue }, step: { outcome: LeaseStepOutcome } | { error: unknown }) => {
      const after =
        'outcome' in step ? leaseAfterStep(health.lease, health.role, step.outcome, now()) : leaseAfterStepFailure(health, errorText(step.error));
      enqueue.assign({ health: { ...health, lease: after.lease, role: after.role } });
      enqueue.emit('outcome' in step ? { type: 'leaseStep', outcome: step.outcome } : { type: 'leaseStepFailed', error: after.lease.note ?? '' });
      if (after.change !== null) enqueue.emit({ type: 'roleChanged', change: after.change, quietWindowMs: quietWindowMs(settings.pollIntervalMs) });
    }),
    recordReadFailure: enqueueActions(({ context, enqueue }, { error }: { error: unknown }) => {
      const message = errorText(error);
      enqueue.assign({
        cycle: context.cycle && { ...context.cycle, failed: true },
        health: { ...context.health, lastError: `reading the trackers failed: ${message}` },
      });
      enqueue.emit({ type: 'readFailed', error: message, behindFloor: isBehindSlotFloor(error) });
    }),
    beginAction: assign({ progress: () => freshProgress() }),
    // Dry run: the plan is logged instead of submitted. Nothing landed, so neither
    // last_success_at nor the landed count moves; last_action says what was planned.
    recordDryRun: enqueueActions(({ context, enqueue }, { step }: { step: CrankStep }) => {
      const submission = submissionFor(step, context.plan);
      const indices = submittedIndices(submission);
      enqueue.assign({ health: { ...context.health, lastAction: describePlanned(step, indices) } });
      enqueue.emit({ type: 'dryRunPlanned', action: STEP_ACTIONS[step], indices, votes: plannedVotes(submission) });
    }),
    // Submitting starts: the cycle has now attempted this action.
    beginAttempt: assign(({ context }, { step }: { step: CrankStep }) => {
      const submitted = submittedIndices(submissionFor(step, context.plan));
      return {
        cycle: context.cycle && attemptedIn(context.cycle, step, submitted),
        progress: { ...context.progress, attemptStartedAtMs: now(), submitted, failure: null },
      };
    }),
    // A retry starts with a fresh read.
    beginReread: assign({
      progress: ({ context }) => ({
        ...context.progress,
        attempt: context.progress.attempt + 1,
        attemptStartedAtMs: now(),
        submitted: [],
        failure: null,
      }),
    }),
    recordLanded: enqueueActions(({ context, enqueue }, { step, report }: { step: CrankStep; report: ActionReport }) => {
      const atMs = now();
      const { attempt, attemptStartedAtMs, submitted } = context.progress;
      const signatures = report.transactions.map((transaction) => transaction.signature);
      enqueue.assign({
        cycle: context.cycle && {
          ...context.cycle,
          cleanupResolved: unionIndices(context.cycle.cleanupResolved, [...report.completed, ...report.alreadyDone]),
        },
        health: {
          ...context.health,
          transactionsLanded: context.health.transactionsLanded + signatures.length,
          lastSuccessAtMs: atMs,
          lastAction: describeLanded(step, submitted, report),
          unlandedSinceMs: unlandedSinceAfterLanding(context.health.unlandedSinceMs, atMs),
        },
        progress: { ...context.progress, lastFailure: null },
      });
      const outcome = signatures.length > 0 ? 'landed' : 'already_done';
      enqueue.emit(attemptEvent(step, attempt, outcome, { indices: submitted, signatures, atMs, durationMs: atMs - attemptStartedAtMs }));
    }),
    // The failure as data; transactions that landed before it count as submitted.
    recordFailure: assign(({ context }, { error }: { error: unknown }) => {
      const landedSignatures = landedSignaturesOf(error);
      const { progress, health, settings } = context;
      const text = errorText(error);
      return {
        progress: {
          ...progress,
          failure: { error: text, retryable: retriesAction(error), landedSignatures },
          lastFailure: retryingAttempt(progress.attempt, settings.maxAttempts, text),
        },
        health: {
          ...health,
          transactionsLanded: health.transactionsLanded + landedSignatures.length,
          unlandedSinceMs: landedSignatures.length > 0 ? unlandedSinceAfterLanding(health.unlandedSinceMs, now()) : health.unlandedSinceMs,
        },
      };
    }),
    // The failed attempt's log line and metrics, once the machine knows whether it will retry.
    reportFailedAttempt: emit(({ context }, { step, willRetry }: { step: CrankStep; willRetry: boolean }) => {
      const { attempt, attemptStartedAtMs, submitted, failure } = context.progress;
      const atMs = now();
      return attemptEvent(step, attempt, 'failed', {
        indices: submitted,
        signatures: failure?.landedSignatures ?? [],
        error: failure?.error ?? null,
        willRetry,
        atMs,
        durationMs: atMs - attemptStartedAtMs,
      });
    }),
    // All attempts used (or the failure cannot be retried): the cycle has failed, SPEC §3.
    recordActionFailed: assign(({ context }, { step }: { step: CrankStep }) => {
      const { attempt, submitted, failure } = context.progress;
      const failed = describeFailed(step, submitted, attempt);
      return {
        cycle: context.cycle && { ...context.cycle, failed: true },
        // last_error names the failure from here on: the attempt's line would repeat it.
        progress: { ...context.progress, lastFailure: null },
        health: { ...context.health, lastAction: failed, lastError: `${failed}: ${failure?.error ?? 'unknown error'}` },
      };
    }),
    // A retry's re-read found nothing left to submit: the earlier attempt's work got done after all.
    resolveAction: enqueueActions(({ context, enqueue }, { step }: { step: CrankStep }) => {
      const { attempt, attemptStartedAtMs } = context.progress;
      if (attempt === 1) return;
      const atMs = now();
      enqueue.assign({
        progress: { ...context.progress, lastFailure: null },
        health: { ...context.health, unlandedSinceMs: unlandedSinceAfterLanding(context.health.unlandedSinceMs, atMs) },
      });
      enqueue.emit(attemptEvent(step, attempt, 'already_done', { atMs, durationMs: atMs - attemptStartedAtMs }));
    }),
    finishCycle: enqueueActions(({ context, enqueue }) => {
      const { cycle } = context;
      if (cycle === null) return;
      const atMs = now();
      const drainBacklog = drainsBacklog(context, cycle);
      enqueue.assign({
        cycle: null,
        plan: null,
        idleWaitedMs: 0,
        drainBacklog,
        backlogStreak: drainBacklog ? context.backlogStreak + 1 : 0,
        // SPEC §3: last_error clears only when a whole cycle completes without a failed action.
        health: { ...context.health, lastCycleFinishedAtMs: atMs, ...(cycle.failed ? {} : { lastError: null }) },
      });
      enqueue.emit({
        type: 'cycleFinished',
        outcome: cycle.failed ? 'error' : 'ok',
        kind: cycleKind(context),
        report: cycleReport(cycle),
        requests: cycle.requests,
        atMs,
        durationMs: atMs - cycle.startedAtMs,
      });
    }),
    // Stopped mid-cycle: that cycle's requests get no report.
    abandonCycle: enqueueActions(({ context, enqueue }) => {
      const requests = [...(context.cycle?.requests ?? []), ...context.queuedRequests];
      enqueue.assign({ cycle: null, queuedRequests: [] });
      if (requests.length > 0) enqueue.emit({ type: 'requestsAbandoned', requests });
    }),
  },
  delays: {
    nextCycleDelay: ({ context }) => nextCycleDelay(pollSchedule(context)),
    // Entered after attempt n failed: the n-th backoff.
    retryDelay: ({ context }) => retryBackoffDelay(context.progress.attempt, context.settings.retryBackoffMs),
  },
});

type NextStep = '#crank.ack_withdraw' | '#crank.cleanup' | '#crank.finishing';

/**
 * One action of the cycle: check for work, submit, and on failure back off, re-read, re-plan
 * and try again while attempts remain (a threshold no can rewind positions, and an earlier
 * batch may have landed: only a fresh read says what is still to send).
 */
function actionState(step: CrankStep, next: NextStep) {
  return crankSetup.createStateConfig({
    tags: ['busy'],
    initial: 'checking',
    entry: 'beginAction',
    states: {
      checking: {
        always: [
          { guard: 'isStopRequested', target: '#crank.stopped' },
          // BRIDGE_DRY_RUN: the plan is recorded (logged, counted) and nothing is submitted.
          { guard: and([WORK_GUARDS[step], 'isDryRun']), target: next, actions: { type: 'recordDryRun', params: { step } } },
          { guard: and([WORK_GUARDS[step], { type: 'maySubmit', params: { step } }]), target: 'submitting' },
          { target: next, actions: { type: 'resolveAction', params: { step } } },
        ],
      },
      submitting: {
        entry: { type: 'beginAttempt', params: { step } },
        invoke: {
          id: 'submit',
          src: 'submitAction',
          input: ({ context }) => submissionFor(step, context.plan),
          onDone: {
            target: next,
            actions: { type: 'recordLanded', params: ({ event }) => ({ step, report: event.output }) },
          },
          onError: { target: 'failed', actions: { type: 'recordFailure', params: ({ event }) => ({ error: event.error }) } },
        },
      },
      failed: {
        always: [
          {
            guard: and(['isRetryableFailure', 'hasAttemptsLeft']),
            target: 'retry-backoff',
            actions: { type: 'reportFailedAttempt', params: { step, willRetry: true } },
          },
          {
            target: next,
            actions: [
              { type: 'reportFailedAttempt', params: { step, willRetry: false } },
              { type: 'recordActionFailed', params: { step } },
            ],
          },
        ],
      },
      'retry-backoff': {
        tags: ['degraded'],
        always: [
          { guard: 'isStopRequested', target: '#crank.stopped' },
          { guard: 'retriesAtOnce', target: 'replanning' },
        ],
        after: { retryDelay: 'replanning' },
        on: { STOP: { target: '#crank.stopped', actions: 'requestStop' } },
      },
      replanning: {
        tags: ['degraded'],
        entry: 'beginReread',
        invoke: {
          id: 'reread',
          src: 'readAndPlan',
          input: readInput,
          onDone: { target: 'checking', actions: { type: 'recordRead', params: ({ event }) => ({ read: event.output }) } },
          onError: { target: 'failed', actions: { type: 'recordFailure', params: ({ event }) => ({ error: event.error }) } },
        },
      },
    },
  });
}

export const crankMachine = crankSetup.createMachine({
  id: 'crank',
  context: ({ input }) => initialCrankContext(input),
  // The first cycle runs at startup: a restarted server catches up without waiting an interval.
  initial: 'polling',
  // While a cycle runs (every state but idle handles these itself).
  on: {
    POLL: { actions: 'dropPoll' },
    CRANK_ONCE: [
      { guard: 'isStopRequested', actions: { type: 'abandonRequest', params: ({ event }) => ({ requestId: event.requestId }) } },
      { actions: { type: 'queueRequest', params: ({ event }) => ({ requestId: event.requestId }) } },
    ],
    STOP: { actions: 'requestStop' },
  },
  states: {
    idle: {
      always: { guard: 'hasQueuedRequests', target: 'polling' },
      after: {
        nextCycleDelay: [
          { guard: 'isCycleDue', target: 'polling' },
          { target: 'idle', reenter: true, actions: 'waitIdleChunk' },
        ],
      },
      on: {
        POLL: 'polling',
        CRANK_ONCE: {
          target: 'polling',
          actions: { type: 'queueRequest', params: ({ event }) => ({ requestId: event.requestId }) },
        },
        STOP: 'stopped',
      },
    },
    polling: {
      tags: ['busy'],
      entry: 'startCycle',
      invoke: {
        id: 'read',
        src: 'readAndPlan',
        input: readInput,
        onDone: { target: 'leasing', actions: { type: 'recordRead', params: ({ event }) => ({ read: event.output }) } },
        onError: {
          target: 'finishing',
          actions: { type: 'recordReadFailure', params: ({ event }) => ({ error: event.error }) },
        },
      },
    },
    // The signing lease, before anything is signed: take it, or read it again before believing it lost (lease.ts).
    leasing: {
      tags: ['busy'],
      always: { guard: not('hasLeaseStep'), target: 'ack_deposit' },
      invoke: {
        id: 'lease',
        src: 'keepLease',
        input: ({ context }) => context.health.lease.want!,
        onDone: { target: 'ack_deposit', actions: { type: 'recordLease', params: ({ event }) => ({ outcome: event.output }) } },
        onError: { target: 'ack_deposit', actions: { type: 'recordLease', params: ({ event }) => ({ error: event.error }) } },
      },
    },
    ack_deposit: actionState('ack_deposit', '#crank.ack_withdraw'),
    ack_withdraw: actionState('ack_withdraw', '#crank.cleanup'),
    cleanup: actionState('cleanup', '#crank.finishing'),
    finishing: {
      entry: 'finishCycle',
      always: [{ guard: 'isStopRequested', target: 'stopped' }, { target: 'idle' }],
    },
    stopped: { type: 'final', entry: 'abandonCycle' },
  },
});
