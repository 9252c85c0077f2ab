import type { BridgeView, ReadLimits } from '../../chain/bridge-chains.js';
import { planAckDeposits, type AckDepositPlan } from './ack-deposit.js';
import { planAckWithdraws, type AckWithdrawPlan } from './ack-withdraw.js';
import { planCleanups, type CleanupPlan } from './cleanup.js';

/**
 * Everything one crank cycle will submit, planned from one BridgeView. JSON-safe (numbers
 * and strings only): it travels in the machine's context and events.
 */
export interface CyclePlan {
  ackDeposit: AckDepositPlan;
  ackWithdraw: AckWithdrawPlan;
  cleanup: CleanupPlan;
}

/**
 * Votes (or cleanups) per action per cycle. Keeps one cycle's submissions, and the time the
 * run lock is held, bounded; 64 votes fit in a handful of transactions. Work beyond it is the
 * backlog, which the next cycle takes at once (docs/crank.md "Timing").
 */
export const MAX_PLANNED_PER_ACTION = 64;

/**
 * What the planners need read for a batch limit: from each position they start at, the batch
 * and one entry more, which tells a backlog from the end of the work.
 */
export function readLimitsFor(limit: number): ReadLimits {
  return { entriesPerPosition: limit + 1 };
}

export function planCycle(view: BridgeView, limit: number = MAX_PLANNED_PER_ACTION): CyclePlan {
  return {
    ackDeposit: planAckDeposits(view, limit),
    ackWithdraw: planAckWithdraws(view, limit),
    cleanup: planCleanups(view, limit),
  };
}

/** More work was found than the plan holds. */
export function hasBacklog(plan: CyclePlan): boolean {
  return (
    plan.ackDeposit.pending > plan.ackDeposit.votes.length ||
    plan.ackWithdraw.pending > plan.ackWithdraw.votes.length ||
    plan.cleanup.pending > plan.cleanup.indices.length
  );
}
