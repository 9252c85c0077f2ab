import { z } from 'zod';
import type { SignerDescription } from '../chain/authority-signer.js';
import type { CheckOff } from '../chain/bridge-chains.js';
import type { HealthStatus } from './health-status.js';
import type { CrankActivity } from './crank-activity.js';
import { CRANK_ROLES } from './health-facts.js';
import { crankReportSchema, type CrankReport } from './crank-types.js';

/**
 * What the HTTP layer and the process wiring see of the crank: a snapshot for /health, one
 * on-demand cycle for POST /crank/once, its current state and recent activity for
 * GET /crank/ui, and a bounded stop for shutdown. The machine's actor
 * implements it; the HTTP layer never touches the actor directly.
 */

/**
 * The answers the crank gives over HTTP, each declared once as a zod schema: its TypeScript type
 * is inferred from it, and src/http/schemas.ts turns it into the JSON Schema fastify serializes
 * with, so a response carries exactly these fields in the wire's snake_case.
 */

// The signer and the checks that are off keep their types in src/chain: `satisfies` here and
// health()'s assignment from them (start-crank.ts) hold each pair together in both directions.

/** With runtime configuration: `file`, or `pkcs11` with the token's label and its session (never a PIN). */
const signerSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('file') }),
  z.strictObject({ kind: z.literal('pkcs11'), token: z.string(), session: z.enum(['open', 'lost']) }),
]) satisfies z.ZodType<SignerDescription>;

const checkOffSchema = z.strictObject({
  check: z.literal('second_signer'),
  chain: z.enum(['source', 'target']),
  reason: z.string(),
}) satisfies z.ZodType<CheckOff>;

/** `crank` object of BridgeHealthSnapshot (SPEC §2.2). */
export const crankHealthSchema = z.strictObject({
  enabled: z.boolean(),
  last_run_at: z.int().nullable(),
  last_success_at: z.int().nullable(),
  last_error: z.string().nullable(),
  last_action: z.string().nullable(),
  total_actions_submitted: z.int(),
  /** Present (true) only under BRIDGE_DRY_RUN: an extension beside SPEC §2.2's fields. */
  dry_run: z.literal(true).optional(),
  /** An enabled crank only: `standby` submits nothing while another instance signs (docs/crank.md, "Role"). */
  role: z.enum(CRANK_ROLES).optional(),
  /** Unix seconds at which the role began; null before the first read. */
  role_since: z.int().nullable().optional(),
  /** Which key signs: an extension beside SPEC §2.2's fields. */
  signer: signerSchema.optional(),
  /** Present only while some check is off (no history on a chain's endpoints): what, where and why. Not a failure: the status is unchanged. */
  checks_off: z.array(checkOffSchema).optional(),
});
export type CrankHealth = z.infer<typeof crankHealthSchema>;

/** `started`: the crank was idle and a cycle began; `coalesced`: a cycle was already running. */
export const crankPollOutcomeSchema = z.enum(['started', 'coalesced']);
export type CrankPollOutcome = z.infer<typeof crankPollOutcomeSchema>;

export { crankReportSchema, type CrankReport };

export interface CrankService {
  health(): CrankHealth;
  /** /health's `status` (health-status.ts): `stalled` is the one a restart can fix. */
  status(): HealthStatus;
  /** The machine's current state and its recent cycles and actions (bounded), for GET /crank/ui. */
  readonly activity: CrankActivity;
  /**
   * Run one cycle now. While a cycle runs the request is queued and answered with its own
   * cycle's report. Rejects with CRANK__DISABLED when the crank is not configured and
   * CRANK__STOPPED once shutdown began. An aborted `signal` rejects the caller's promise with
   * its reason; the cycle still runs.
   */
  runOnce(signal?: AbortSignal): Promise<CrankReport>;
  /**
   * Nudge the loop (the machine's POLL event): start a cycle now if none is running, without
   * waiting for its report. A POLL during a cycle is coalesced into it. Throws CRANK__DISABLED
   * or CRANK__STOPPED like runOnce.
   */
  poll(): CrankPollOutcome;
  /**
   * Stop taking cycles; let a running one finish for up to `deadlineMs` milliseconds from now,
   * then abort it. Queued runOnce requests are rejected with CRANK__STOPPED.
   */
  stop(deadlineMs: number): Promise<void>;
}

/** The service used when no runtime configuration is present. */
export const DISABLED_CRANK_HEALTH: CrankHealth = {
  enabled: false,
  last_run_at: null,
  last_success_at: null,
  last_error: null,
  last_action: null,
  total_actions_submitted: 0,
};
