import { and, assign, emit, enqueueActions, fromPromise, setup, type ParameterizedObject } from 'xstate';
import type { ReadInput } from './crank-actors.js';
import {
  freshProgress,
  initialCrankContext,
  type CrankContext,
  type CycleRead,
  submissionFor,
  type ActionReport,
  type Submission,
} from './crank-context.js';
import type { CrankSettings } from './crank-settings.js';
import type { CrankEmitted, CrankEvent } from './crank-events.js';
import type { CrankStep } from './crank-types.js';
import {
  actionFailed,
  actionResolved,
  attemptFailed,
  attemptLanded,
  attemptStarted,
  cycleAbandoned,
  cycleFinished,
  cycleStarted,
  dryRunRecorded,
  failedAttemptReported,
  readFailed,
  readRecorded,
  rereadStarted,
  stopRequested,
  type StepRecord,
} from './step-records.js';
import { retryBackoffDelay } from './backoff.js';
import { hasAttemptsLeft } from '../failure-policy.js';
import {
  hasAckDepositWork,
  hasAckWithdrawWork,
  hasCleanupWork,
  idleWaitAfterChunk,
  isCycleDue,
  maySubmit,
  nextCycleDelay,
  type PollSchedule,
} from './rules.js';

/**
 * The crank: one cycle at a time (SPEC §1 run lock), in SPEC §3 order: read and plan, then
 * ack_deposit, ack_withdraw, cleanup_deposit, each retried with backoff up to the attempt
 * limit, then back to idle until the next poll. The machine has no I/O: effects are the
 * `readAndPlan` and `submitAction` actors (crank-actors.ts), provided by startCrank; what the
 * outside world should learn (logs, metrics, answers to CRANK_ONCE) is emitted. In a dry run
 * (settings.dryRun) each action state records its plan instead of invoking submitAction.
 * docs/crank.md describes every state, event and rule.
 */

type Tag = 'busy' | 'degraded';

/** Placeholders that fail loudly: the machine's definition must load without a chain client. */
function unprovided(name: string) {
  return () =>
    Promise.reject(new Error(`the crank machine's ${name} actor was not provided: run the machine through startCrank()`));
}

const now = (): number => Date.now();

/**
 * An action that records one step: the step's pure record (step-records.ts) from the context
 * and the action's params, applied as one context update and its events. The type arguments
 * are spelled out because setup() cannot infer them through a helper; `never` for actors,
 * actions, guards and delays is what assign() itself declares, and setup accepts it.
 */
function record<TParams extends ParameterizedObject['params'] | undefined = undefined>(
  step: (context: CrankContext, params: TParams) => StepRecord,
) {
  return enqueueActions<CrankContext, CrankEvent, TParams, CrankEvent, never, never, never, never, CrankEmitted>(
    ({ context, enqueue }, params) => {
      const { update, emit: events } = step(context, params);
      enqueue.assign(update);
      for (const event of events) enqueue.emit(event);
    },
  );
}

function pollSchedule(context: CrankContext): PollSchedule {
  return {
    pollIntervalMs: context.settings.pollIntervalMs,
    idleWaitedMs: context.idleWaitedMs,
    drainBacklog: context.drainBacklog,
  };
}

function readInput({ context }: { context: CrankContext }): ReadInput {
  return { batchLimit: context.settings.batchLimit };
}

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
  },
  guards: {
    hasQueuedRequests: ({ context }) => context.queuedRequests.length > 0,
    isCycleDue: ({ context }) => isCycleDue(pollSchedule(context)),
    isStopRequested: ({ context }) => context.stopRequested,
    hasAckDepositWork: ({ context }) => hasAckDepositWork(context.plan),
    hasAckWithdrawWork: ({ context }) => hasAckWithdrawWork(context.plan),
    hasCleanupWork: ({ context }) => hasCleanupWork(context.plan),
    hasAttemptsLeft: ({ context }) => hasAttemptsLeft(context.progress.attempt, context.settings.maxAttempts),
    isRetryableFailure: ({ context }) => context.progress.failure?.retryable === true,
    // A base of 0 is the only one whose every backoff is 0 ms (backoff.ts): no timer at all,
    // since a 0 ms timer still waits 1 ms in Node and each retry would wait one more.
    retriesAtOnce: ({ context }) => context.settings.retryBackoffMs === 0,
    maySubmit: ({ context }, params: { step: CrankStep }) => maySubmit(params.step, context.health, context.settings.onForeignSigner),
    isDryRun: ({ context }) => context.settings.dryRun,
  },
  actions: {
    queueRequest: assign(({ context }, params: { requestId: string }) => ({
      queuedRequests: [...context.queuedRequests, params.requestId],
    })),
    abandonRequest: emit((_, params: { requestId: string }) => ({ type: 'requestsAbandoned' as const, requests: [params.requestId] })),
    dropPoll: emit({ type: 'pollCoalesced' as const }),
    requestStop: record((context) => stopRequested(context)),
    waitIdleChunk: assign(({ context }) => ({ idleWaitedMs: idleWaitAfterChunk(pollSchedule(context)) })),
    startCycle: record((context) => cycleStarted(context, now())),
    recordRead: record((context, { read }: { read: CycleRead }) => readRecorded(context, read, now())),
    recordReadFailure: record((context, { error }: { error: unknown }) => readFailed(context, error)),
    beginAction: assign(() => ({ progress: freshProgress() })),
    recordDryRun: record((context, { step }: { step: CrankStep }) => dryRunRecorded(context, step)),
    beginAttempt: record((context, { step }: { step: CrankStep }) => attemptStarted(context, step, now())),
    beginReread: record((context) => rereadStarted(context, now())),
    recordLanded: record((context, { step, report }: { step: CrankStep; report: ActionReport }) => attemptLanded(context, step, report, now())),
    recordFailure: record((context, { error }: { error: unknown }) => attemptFailed(context, error)),
    reportFailedAttempt: record((context, { step, willRetry }: { step: CrankStep; willRetry: boolean }) =>
      failedAttemptReported(context, step, willRetry, now()),
    ),
    recordActionFailed: record((context, { step }: { step: CrankStep }) => actionFailed(context, step)),
    resolveAction: record((context, { step }: { step: CrankStep }) => actionResolved(context, step, now())),
    finishCycle: record((context) => cycleFinished(context, now())),
    abandonCycle: record((context) => cycleAbandoned(context)),
  },
  delays: {
    nextCycleDelay: ({ context }) => nextCycleDelay(pollSchedule(context)),
    // Entered after attempt n failed: the n-th backoff.
    retryDelay: ({ context }) => retryBackoffDelay(context.progress.attempt, context.settings.retryBackoffMs),
  },
});

const WORK_GUARDS = {
  ack_deposit: 'hasAckDepositWork',
  ack_withdraw: 'hasAckWithdrawWork',
  cleanup: 'hasCleanupWork',
} as const;

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
        onDone: { target: 'ack_deposit', actions: { type: 'recordRead', params: ({ event }) => ({ read: event.output }) } },
        onError: {
          target: 'finishing',
          actions: { type: 'recordReadFailure', params: ({ event }) => ({ error: event.error }) },
        },
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
