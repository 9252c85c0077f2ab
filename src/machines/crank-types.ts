import { z } from 'zod';
import type { SignerDescription } from '../chain/authority-signer.js';
import type { CheckOff, LandingMode } from '../chain/bridge-chains.js';
import type { CrankAction } from '../domain.js';

/**
 * The words every part of the crank shares: its steps, its roles, and the answers it gives over HTTP.
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

/** Whether this instance submits (rules.ts, the role). */
export type CrankRole = 'active' | 'standby';

export const CRANK_ROLES: readonly CrankRole[] = ['active', 'standby'];

/**
 * The answers the crank gives over HTTP, each declared once as a zod schema: its TypeScript type
 * is inferred from it, and src/http/schemas.ts turns it into the JSON Schema fastify serializes
 * with, so a response carries exactly these fields in the wire's snake_case.
 */

/** CrankReportResponse (SPEC §2.3): the type and the HTTP response schema from this one definition. */
export const crankReportSchema = z.strictObject({
  ack_deposit_attempted: z.boolean(),
  ack_withdraw_attempted: z.boolean(),
  cleanup_attempted: z.int(),
  cleanup_completed: z.int(),
});
export type CrankReport = z.infer<typeof crankReportSchema>;

// The signer and the checks that are off keep their types in src/chain: `satisfies` here and
// health()'s assignment from them (crank-service.ts) hold each pair together in both directions.

/** With runtime configuration: `file`, `pkcs11` with the token's label and its session (never a PIN), or a key service and the key's name. */
const signerSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('file') }),
  z.strictObject({ kind: z.literal('pkcs11'), token: z.string(), session: z.enum(['open', 'lost']) }),
  z.strictObject({ kind: z.enum(['aws-kms', 'gcp-kms', 'vault-transit']), key: z.string() }),
]) satisfies z.ZodType<SignerDescription>;

const checkOffSchema = z.strictObject({
  check: z.literal('second_signer'),
  chain: z.enum(['source', 'target']),
  reason: z.string(),
}) satisfies z.ZodType<CheckOff>;

const LANDING_MODES = ['nonce', 'blockhash'] as const satisfies readonly LandingMode[];

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
  /** An enabled crank only: how each chain's transactions land, `nonce` or `blockhash` (docs/chain-client.md, "Landing once: durable nonces"). */
  landing_mode: z.strictObject({ source: z.enum(LANDING_MODES), target: z.enum(LANDING_MODES) }).optional(),
});
export type CrankHealth = z.infer<typeof crankHealthSchema>;

/**
 * The role beside POST /crank/once's report, POST /crank/poll's outcome and GET /crank/activity
 * (docs/crank.md, "Role"): an extension beside SPEC §2.3's fields, so that a standby's report of
 * nothing attempted is not read as a bridge with no work.
 */
export const crankRoleViewSchema = z.strictObject({
  role: z.enum(CRANK_ROLES),
  /** Standby only: unix seconds (rounded up) from which it may sign, if no other instance signs first. */
  may_sign_at: z.int().optional(),
});
export type CrankRoleView = z.infer<typeof crankRoleViewSchema>;

/** `started`: the crank was idle and a cycle began; `coalesced`: a cycle was already running. */
export const crankPollOutcomeSchema = z.enum(['started', 'coalesced']);
export type CrankPollOutcome = z.infer<typeof crankPollOutcomeSchema>;

/** /health's crank object of the service used when no runtime configuration is present. */
export const DISABLED_CRANK_HEALTH: CrankHealth = {
  enabled: false,
  last_run_at: null,
  last_success_at: null,
  last_error: null,
  last_action: null,
  total_actions_submitted: 0,
};
