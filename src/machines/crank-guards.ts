import { hasAttemptsLeft } from '../failure-policy.js';
import { pollSchedule, type CrankContext } from './crank-context.js';
import { STEP_CHAINS, type CrankStep } from './crank-types.js';
import { isCycleDue } from './delays.js';
import { chainsShortOfFees } from './health.js';
import { isRelayableWithdrawResult } from './planning/cycle-plan.js';
import { isHalted } from './role.js';

/**
 * When the crank machine (crank-machine.ts) may move on, as named guards: pure tests of its
 * context, no I/O and no clock but the poll schedule's. Whether a failure is tried again, and
 * how many attempts an action has, is src/failure-policy.ts's decision; these only read it.
 * Rule 3.1 is tested again here on every planned withdraw vote, after the planner applied it.
 */

type Guarded = { context: CrankContext };

export const crankGuards = {
  hasQueuedRequests: ({ context }: Guarded) => context.queuedRequests.length > 0,
  isCycleDue: ({ context }: Guarded) => isCycleDue(pollSchedule(context)),
  isStopRequested: ({ context }: Guarded) => context.stopRequested,
  // Crank cycle step 1: the source has deposits this authority has not voted on yet.
  hasAckDepositWork: ({ context: { plan } }: Guarded) => plan !== null && plan.ackDeposit.votes.length > 0,
  // Crank cycle step 3: finalized destination results wait for this authority's vote. Rule 3.1
  // again on every planned vote (the planner applied it first), so that no vote for an unready
  // result can leave even if planning went wrong.
  hasAckWithdrawWork: ({ context: { plan } }: Guarded) =>
    plan !== null && plan.ackWithdraw.votes.length > 0 && plan.ackWithdraw.votes.every((planned) => isRelayableWithdrawResult(planned.destination)),
  // Crank cycle step 5: finalized deposit entries not cleaned up yet.
  hasCleanupWork: ({ context: { plan } }: Guarded) => plan !== null && plan.cleanup.indices.length > 0,
  hasAttemptsLeft: ({ context }: Guarded) => hasAttemptsLeft(context.progress.attempt, context.settings.maxAttempts),
  isRetryableFailure: ({ context }: Guarded) => context.progress.failure?.retryable === true,
  // A base of 0 is the only one whose every backoff is 0 ms (delays.ts): no timer at all,
  // since a 0 ms timer still waits 1 ms in Node and each retry would wait one more.
  retriesAtOnce: ({ context }: Guarded) => context.settings.retryBackoffMs === 0,
  // A step submits only while active (role.ts) with no doubt on its lease left to check (a
  // retry's re-read can raise one: lease.ts), not halted on a second signer, and while the
  // authority can pay the fees on the chain the step's transactions land on.
  maySubmit: ({ context: { health, settings } }: Guarded, params: { step: CrankStep }) =>
    health.role.role === 'active' &&
    health.lease.want?.kind !== 'confirm' &&
    !isHalted(settings.onForeignSigner, health.foreignSigner) &&
    !chainsShortOfFees(health.fees).includes(STEP_CHAINS[params.step]),
  isDryRun: ({ context }: Guarded) => context.settings.dryRun,
  hasLeaseStep: ({ context }: Guarded) => context.health.lease.want !== null,
};

/** The guard that says a step has work, by step. */
export const WORK_GUARDS = {
  ack_deposit: 'hasAckDepositWork',
  ack_withdraw: 'hasAckWithdrawWork',
  cleanup: 'hasCleanupWork',
} as const satisfies Record<CrankStep, keyof typeof crankGuards>;
