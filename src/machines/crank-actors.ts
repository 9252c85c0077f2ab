import { fromPromise } from 'xstate';
import type { BridgeChains, PlannedWork } from '../chain/bridge-chains.js';
import type { ActionReport, CycleRead, Submission } from './crank-context.js';
import { planCycle, readLimitsFor, type CyclePlan } from './planning/cycle-plan.js';

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
export async function readAndPlan(chains: BridgeChains, input: ReadInput, signal: AbortSignal): Promise<CycleRead> {
  const view = await chains.readState(signal, readLimitsFor(input.batchLimit));
  signal.throwIfAborted();
  const plan = planCycle(view, input.batchLimit);
  const fees = chains.plannedFees(plannedWork(plan));
  // Last: it reports each new transaction once, so nothing may fail after it and drop them.
  const authority = await chains.readAuthority(signal);
  return { plan, authority, fees };
}

function plannedWork(plan: CyclePlan): PlannedWork {
  return {
    ackDeposits: plan.ackDeposit.votes,
    ackWithdraws: plan.ackWithdraw.votes.map((planned) => planned.vote),
    cleanups: plan.cleanup.indices,
  };
}

/** Submit one step's planned work (crank cycle steps 2, 4 and 6). */
export async function submitAction(chains: BridgeChains, submission: Submission, signal: AbortSignal): Promise<ActionReport> {
  switch (submission.step) {
    case 'ackDeposit': {
      const { transactions } = await chains.ackDeposits(submission.votes, signal);
      return { transactions, completed: [], alreadyDone: [] };
    }
    case 'ackWithdraw': {
      const { transactions } = await chains.ackWithdraws(submission.votes, signal);
      return { transactions, completed: [], alreadyDone: [] };
    }
    case 'cleanup': {
      const { transactions, completed, alreadyDone } = await chains.cleanupDeposits(submission.indices, signal);
      return { transactions, completed, alreadyDone };
    }
  }
}

export function crankActors(chains: BridgeChains) {
  return {
    readAndPlan: fromPromise<CycleRead, ReadInput>(({ input, signal }) => readAndPlan(chains, input, signal)),
    submitAction: fromPromise<ActionReport, Submission>(({ input, signal }) => submitAction(chains, input, signal)),
  };
}
