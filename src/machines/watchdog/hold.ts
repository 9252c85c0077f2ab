import type { ChainSide } from '../../domain.js';
import type { CyclePlan } from '../planning/cycle-plan.js';

/**
 * A cycle's plan with the held chains' work taken out (the watchdog's halt, a program hash that
 * does not match): ack_deposit signs on the destination, ack_withdraw and cleanup_deposit on the
 * source. Nothing is skipped: votes are in order from this authority's next_index, so holding a
 * chain holds its whole queue, and the first cycle after the hold plans from the same place.
 * Held work is not backlog either (pending 0): the machine must not run cycles back to back.
 */
export function heldPlan(plan: CyclePlan, holds: Record<ChainSide, string | null>): CyclePlan {
  return {
    ackDeposit: holds.target === null ? plan.ackDeposit : { votes: [], pending: 0 },
    ackWithdraw: holds.source === null ? plan.ackWithdraw : { votes: [], pending: 0 },
    cleanup: holds.source === null ? plan.cleanup : { indices: [], pending: 0, waits: plan.cleanup.waits },
  };
}
