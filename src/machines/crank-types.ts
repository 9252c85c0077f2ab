import { z } from 'zod';
import type { CrankAction } from '../domain.js';

/**
 * The words every part of the crank shares: its steps and the report a cycle answers with.
 * A leaf: it imports nothing of the crank, so the machine's data, its events, /health and the
 * HTTP service can all use it without importing one another.
 */

/** The action steps of a cycle, in SPEC §3 order; each is a state of the machine. */
export type CrankStep = 'ack_deposit' | 'ack_withdraw' | 'cleanup';

/** The protocol name of each step, as logs and metric labels use it. */
export const STEP_ACTIONS: Readonly<Record<CrankStep, CrankAction>> = {
  ack_deposit: 'ack_deposit',
  ack_withdraw: 'ack_withdraw',
  cleanup: 'cleanup_deposit',
};

/** CrankReportResponse (SPEC §2.3): the type and the HTTP response schema from this one definition. */
export const crankReportSchema = z.strictObject({
  ack_deposit_attempted: z.boolean(),
  ack_withdraw_attempted: z.boolean(),
  cleanup_attempted: z.int(),
  cleanup_completed: z.int(),
});
export type CrankReport = z.infer<typeof crankReportSchema>;
