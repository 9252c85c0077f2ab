import { isRelayableWithdrawResult } from './planning/ack-withdraw.js';
import type { CyclePlan } from './planning/cycle-plan.js';

/**
 * The rules the machine's guards (crank-machine.ts) decide by, as pure predicates named after
 * them, on the plan and on the attempts kept in its context. Rule 3.1 itself lives with the
 * planner that applies it first (planning/ack-withdraw.ts); the guard checks it again.
 */

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
