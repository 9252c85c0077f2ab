import type { BridgeChains, PlannedWork, SigningLease } from '../chain/port/bridge-chains.js';
import { CHAINS } from '../domain.js';
import type { ActionReport, CycleRead, ReadInput, Submission } from './crank-context.js';
import type { LeaseStepOutcome, LeaseWant } from './lease.js';
import { CLEANUP_GRACE_READS } from './planning/cleanup-turns.js';
import { planCycle, readLimitsFor, type CyclePlan } from './planning/cycle-plan.js';
import { waitingRead } from './planning/waiting.js';
import { heldPlan } from './watchdog/hold.js';
import type { Watchdog } from './watchdog/watchdog.js';

/**
 * The crank's effects: plain async functions over BridgeChains that honour the abort signal,
 * wrapped with `fromPromise` for the machine by crankActors (crank-service.ts). Everything they
 * return is JSON-safe.
 */

/**
 * Read both trackers and plan the cycle (crank cycle steps 1, 3 and 5); read the authority's
 * balances and the transactions its key signed, and price the plan in fees.
 */
export async function readAndPlan(chains: BridgeChains, input: ReadInput, signal: AbortSignal, watchdog?: Watchdog): Promise<CycleRead> {
  const view = await chains.readState(signal, readLimitsFor(input.batchLimit));
  const readAtMs = performance.now();
  signal.throwIfAborted();
  // The watchdog judges the view already read (no read of its own in the cycle); its holds take
  // a held chain's whole queue out of the plan, never single votes.
  watchdog?.observe(view);
  const planned = planCycle(view, input.batchLimit, { waits: input.cleanupWaits, graceReads: CLEANUP_GRACE_READS });
  const plan = watchdog === undefined ? planned : watchdog.limitFlow(heldPlan(planned, watchdog.holds()));
  const waiting = waitingRead(view, plan);
  const fees = chains.plannedFees(plannedWork(plan));
  // At or after the destination header's slot: the lease and the plan are one view of that chain.
  const lease = input.readLease && chains.lease !== undefined ? await chains.lease.read(signal, view.slots.target) : undefined;
  const modes = chains.lifetimeModes();
  // Last: it reports each new transaction once, so nothing may fail after it and drop them.
  const authority = await chains.readAuthority(signal);
  return {
    plan,
    authority,
    fees,
    waiting,
    readAtMs,
    ...(lease === undefined ? {} : { lease }),
    nonceSignal: CHAINS.every((chain) => modes[chain] === 'nonce'),
  };
}

/**
 * The leasing step (lease.ts): take the lease as the read saw it, or look for proof before
 * believing it lost (docs/chain-client.md "The lease": one endpoint's answer is a doubt).
 */
export async function keepLease(lease: SigningLease, want: LeaseWant, signal: AbortSignal): Promise<LeaseStepOutcome> {
  if (want.kind === 'confirm') return lease.check(want.value, want.seen, signal);
  const taking = await lease.take(want.seen, signal);
  return taking.taken
    ? { kind: 'took', value: taking.value, slot: taking.slot, signature: taking.signature }
    : { kind: 'not_taken', seen: taking.seen, why: taking.why };
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
