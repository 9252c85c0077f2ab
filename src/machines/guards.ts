import type { CreatedTokenAccount, DepositResult, WithdrawStatus } from '../chain/types.js';
import type { CyclePlan } from './planning/cycle-plan.js';

/**
 * The rules the crank decides by, as pure predicates named after them. The planners use
 * them on decoded chain records; the machine's guards (crank-machine.ts) use them on the plan
 * and on failures kept in its context.
 */

/** The part of a WithdrawEntry that rule 3.1 looks at (a decoded entry fits, so does a plan item). */
export interface WithdrawReadiness {
  status: WithdrawStatus;
  createdTokenAccount: CreatedTokenAccount;
  result: { kind: DepositResult['kind'] };
}

/**
 * Rule 3.1: a destination result may be relayed by ack_withdraw only once it is final and
 * the user can no longer be surprised by it: Rejected, or Confirmed with the token account
 * no longer Pending (a Confirmed entry waits until the user claims it).
 */
export function isRelayableWithdrawResult(entry: WithdrawReadiness): boolean {
  if (entry.status !== 'Finalized') return false;
  if (entry.result.kind === 'Rejected') return true;
  return entry.result.kind === 'Confirmed' && entry.createdTokenAccount !== 'Pending';
}

/** SPEC §3 failure rule: BRIDGE_CRANK_MAX_ATTEMPTS attempts in total per action. */
export function hasAttemptsLeft(failedAttempts: number, maxAttempts: number): boolean {
  return failedAttempts < maxAttempts;
}

/** Crank cycle step 1: the source has deposits this authority has not voted on yet. */
export function hasAckDepositWork(plan: CyclePlan | null): boolean {
  return plan !== null && plan.ackDeposit.votes.length > 0;
}

/**
 * Crank cycle step 3: finalized destination results wait for this authority's vote. Every
 * planned vote is checked against rule 3.1 again, so that no vote for an unready result can
 * leave even if planning went wrong.
 */
export function hasAckWithdrawWork(plan: CyclePlan | null): boolean {
  if (plan === null || plan.ackWithdraw.votes.length === 0) return false;
  return plan.ackWithdraw.votes.every((planned) => isRelayableWithdrawResult(planned.destination));
}

/** Crank cycle step 5: finalized deposit entries not cleaned up yet. */
export function hasCleanupWork(plan: CyclePlan | null): boolean {
  return plan !== null && plan.cleanup.indices.length > 0;
}
