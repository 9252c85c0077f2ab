import { fromPromise } from 'xstate';
import type { BridgeChains, PlannedWork } from '../chain/bridge-chains.js';
import { BridgeError } from '../errors.js';
import { setLongTimeout } from '../time.js';
import type { CycleRead, ActionReport, Submission } from './crank-context.js';
import { STEP_ACTIONS } from './crank-types.js';
import { planCycle, readLimitsFor, type CyclePlan } from './planning/cycle-plan.js';
import { waitingRead } from './planning/waiting.js';

/**
 * The crank's effects: plain async functions over BridgeChains that honour the abort signal,
 * wrapped with `fromPromise` for the machine. Everything they return is JSON-safe.
 */

export interface ReadInput {
  batchLimit: number;
}

/**
 * Read both trackers and plan the cycle (crank cycle steps 1, 3 and 5); read the authority's
 * balances and the transactions its key signed, and price the plan in fees.
 */
async function readAndPlan(chains: BridgeChains, input: ReadInput, signal: AbortSignal): Promise<CycleRead> {
  const view = await chains.readState(signal, readLimitsFor(input.batchLimit));
  const readAtMs = performance.now();
  signal.throwIfAborted();
  const plan = planCycle(view, input.batchLimit);
  const waiting = waitingRead(view, plan);
  const fees = chains.plannedFees(plannedWork(plan));
  // Last: it reports each new transaction once, so nothing may fail after it and drop them.
  const authority = await chains.readAuthority(signal);
  return { plan, authority, fees, waiting, readAtMs };
}

function plannedWork(plan: CyclePlan): PlannedWork {
  return {
    ackDeposits: plan.ackDeposit.votes,
    ackWithdraws: plan.ackWithdraw.votes.map((planned) => planned.vote),
    cleanups: plan.cleanup.indices,
  };
}

/** Submit one step's planned work (crank cycle steps 2, 4 and 6). */
async function submitAction(chains: BridgeChains, submission: Submission, signal: AbortSignal): Promise<ActionReport> {
  switch (submission.step) {
    case 'ack_deposit': {
      const { transactions } = await chains.ackDeposits(submission.votes, signal);
      return { transactions, completed: [], alreadyDone: [] };
    }
    case 'ack_withdraw': {
      const { transactions } = await chains.ackWithdraws(submission.votes, signal);
      return { transactions, completed: [], alreadyDone: [] };
    }
    case 'cleanup': {
      const { transactions, completed, alreadyDone } = await chains.cleanupDeposits(submission.indices, signal);
      return { transactions, completed, alreadyDone };
    }
  }
}

/**
 * Runs one attempt of an action, cut at `deadlineMs` (cycle-bound.ts: one transaction's life) as
 * a retryable failure. The chain client leaves a transaction whose outcome the cut left unknown
 * pending, and the next attempt resolves it before signing anything new.
 */
export async function withAttemptDeadline<T>(
  submission: Submission,
  deadlineMs: number,
  signal: AbortSignal,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const deadline = new AbortController();
  const timer = setLongTimeout(() => deadline.abort(new Error('attempt deadline')), deadlineMs);
  try {
    return await run(AbortSignal.any([signal, deadline.signal]));
  } catch (err) {
    if (!deadline.signal.aborted || signal.aborted) throw err;
    const action = STEP_ACTIONS[submission.step];
    throw new BridgeError(
      'CRANK__ATTEMPT_DEADLINE_EXCEEDED',
      { action, deadlineMs },
      `${action} attempt cut after ${Math.round(deadlineMs / 1000)} s (one transaction's life, docs/crank.md "Bounds"): ` +
        'the chain is not confirming or the RPC is not answering; a transaction left without an outcome is resolved by the next attempt',
    );
  } finally {
    timer.clear();
  }
}

export function crankActors(chains: BridgeChains, limits: { attemptDeadlineMs: number }) {
  return {
    readAndPlan: fromPromise<CycleRead, ReadInput>(({ input, signal }) => readAndPlan(chains, input, signal)),
    submitAction: fromPromise<ActionReport, Submission>(({ input, signal }) =>
      withAttemptDeadline(input, limits.attemptDeadlineMs, signal, (attemptSignal) => submitAction(chains, input, attemptSignal)),
    ),
  };
}
