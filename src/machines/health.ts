import * as z from 'zod';
import type { KeyServiceKind, SignerDescription } from '../signer/authority-signer.js';
import type { AuthorityView, ChainAmounts, CheckOff, LifetimeMode, LandingSummary } from '../chain/port/bridge-chains.js';
import type { CrankConfig } from '../config/config.js';
import { CHAINS, type ChainSide, chainName } from '../domain.js';
import { describeError } from '../errors.js';
import { boundText } from '../text.js';
import { LEASE_STATUSES, type LeaseFacts } from './lease.js';
import { CRANK_ROLES, isHalted, keyUseText, twinProblem, type ForeignTransaction, type RoleFacts } from './role.js';

/**
 * /health, decided in one place: the facts the crank keeps (HealthFacts, in its context) and
 * what the running actor and the chains say right now (HealthInput) go in; the `status` and
 * the `crank` object of the answer (its schema too) come out (docs/http-api.md "GET /health").
 *
 * - `stalled` (HTTP 503): the crank stopped on an internal error, or no cycle has finished
 *   within `stalledAfterMs` (poll interval + worst-case cycle) of the previous one, or of the
 *   start before the first. The one state a restart can fix.
 * - `degraded` (HTTP 200): the loop runs but something needs an operator: an attempt of the
 *   running action failed (from the first failed attempt until one lands), the latest cycle
 *   failed (last_error is set), the authority cannot pay a plan's fees or is below
 *   BRIDGE_MIN_BALANCE_LAMPORTS, another process signed with its key within the hold, or the
 *   crank halted on that, or it stands by for another instance that has kept signing for
 *   longer than BRIDGE_HANDOFF_SECS (a twin that stays), or an RPC endpoint is left out for its
 *   configuration (a node of another cluster).
 * - `ok`: the crank is disabled, or none of the above.
 */

/** What the crank keeps for /health, in its context (times in unix milliseconds; the answer is in seconds). */
export interface HealthFacts {
  lastRunAtMs: number | null;
  lastSuccessAtMs: number | null;
  lastError: string | null;
  lastAction: string | null;
  /** Transactions signed by this authority that landed (SPEC total_actions_submitted). */
  transactionsLanded: number;
  lastCycleFinishedAtMs: number | null;
  /** Per chain at the latest read: the authority's balance and the fees the plan needed. */
  fees: ChainFees | null;
  /** The latest transaction signed by this authority's key that this process did not sign, while it was active. */
  foreignSigner: ForeignTransaction | null;
  /** Active or standby, and the other signer a standby watches (role.ts). */
  role: RoleFacts;
  /** The signing lease (lease.ts). */
  lease: LeaseFacts;
  /**
   * Since when work has waited for this active authority with none of its transactions landing
   * (the first read that found work after the latest landing, or that landing); null while
   * nothing waits, while standing by, in a dry run, and before the first read.
   */
  unlandedSinceMs: number | null;
}

/**
 * unlandedSinceMs after a read: kept while work still waits (a read is no landing), started at
 * this read when work appears, cleared when nothing waits or this instance submits nothing.
 */
export function unlandedSinceAfterRead(previousMs: number | null, pending: number, submits: boolean, atMs: number): number | null {
  if (pending === 0 || !submits) return null;
  return previousMs ?? atMs;
}

/** unlandedSinceMs after a landing (or work found done): the clock starts again, if work waits. */
export function unlandedSinceAfterLanding(previousMs: number | null, atMs: number): number | null {
  return previousMs === null ? null : atMs;
}

interface FeeFacts {
  balance: number;
  need: number;
}

export type ChainFees = Record<ChainSide, FeeFacts>;

/** The balance and the need on each chain, from one read. */
export function feeFacts(authority: AuthorityView, need: ChainAmounts): ChainFees {
  return {
    source: { balance: authority.source.balance, need: need.source },
    target: { balance: authority.target.balance, need: need.target },
  };
}

/** The chains on which the authority cannot pay what the plan would send. */
export function chainsShortOfFees(fees: ChainFees | null): ChainSide[] {
  return fees === null ? [] : CHAINS.filter((chain) => fees[chain].balance < fees[chain].need);
}

/** The chains on which the balance is below the early-warning level (a level of 0 warns never). */
export function chainsBelowMinimum(fees: ChainFees | null, minBalanceLamports: number): ChainSide[] {
  return fees === null ? [] : CHAINS.filter((chain) => fees[chain].balance < minBalanceLamports);
}

/**
 * Cap of an error as /health's last_error and the crank's log lines quote it. Our own messages
 * (account, variable, what to do) stay well below it; foreign text inside them was already cut
 * to 256 characters where it entered (src/chain/rpc/rpc-failure.ts). This is the second line.
 */
export const MAX_ERROR_CHARS = 1024;

/** An error as the crank keeps it for /health and its logs: its text, bounded (the error object itself stays out of the context). */
export function errorText(error: unknown): string {
  return boundText(describeError(error), MAX_ERROR_CHARS);
}

export type HealthStatus = 'ok' | 'degraded' | 'stalled';

export const HEALTH_STATUSES: readonly HealthStatus[] = ['ok', 'degraded', 'stalled'];

/**
 * A foreign signature keeps /health degraded this long (BRIDGE_ON_FOREIGN_SIGNER=continue): long
 * enough for a scrape-based alert to see it, short enough that a rollout's seconds of overlap
 * clear on their own.
 */
export const FOREIGN_SIGNER_HOLD_MS = 15 * 60_000;

/** At least FOREIGN_SIGNER_HOLD_MS, and two polls so that a slow poll still sees it. */
export function foreignSignerHoldMs(pollIntervalMs: number): number {
  return Math.max(FOREIGN_SIGNER_HOLD_MS, 2 * pollIntervalMs);
}

export interface HealthInput {
  /** False when the crank is disabled by configuration, or its actor has stopped. */
  enabled: boolean;
  /** Why the crank's actor stopped on an internal error; null while it runs. */
  internalError: string | null;
  startedAtMs: number;
  facts: HealthFacts;
  settings: Pick<CrankConfig, 'onForeignSigner' | 'minBalanceLamports' | 'handoffMs'>;
  /** Poll interval + worst-case cycle (delays.ts). */
  stalledAfterMs: number;
  /** How long a foreign signature keeps the status degraded (with BRIDGE_ON_FOREIGN_SIGNER=continue). */
  foreignSignerHoldMs: number;
  /** The running action's latest failed attempt, from the first until one lands or the action gives up (progress.lastFailure); null otherwise. */
  retrying: string | null;
  /** RPC endpoints left out for their configuration, each naming its variable. */
  endpointProblems: string[];
}

export interface HealthVerdict {
  status: HealthStatus;
  /** What is wrong and what to do, most urgent first; /health's last_error joins them. */
  problems: string[];
}

export function healthVerdict(input: HealthInput, nowMs: number): HealthVerdict {
  if (!input.enabled && input.internalError === null) return { status: 'ok', problems: [] };
  const stall = stallProblem(input, nowMs);
  const problems = [...(stall === null ? [] : [stall]), ...degradations(input, nowMs)];
  if (stall !== null) return { status: 'stalled', problems };
  return { status: problems.length > 0 ? 'degraded' : 'ok', problems };
}

function stallProblem({ internalError, facts, startedAtMs, stalledAfterMs }: HealthInput, nowMs: number): string | null {
  if (internalError !== null) return `${internalError}; restart the server`;
  const sinceMs = nowMs - (facts.lastCycleFinishedAtMs ?? startedAtMs);
  if (sinceMs <= stalledAfterMs) return null;
  const what = facts.lastCycleFinishedAtMs === null ? 'no crank cycle has finished since the start' : 'no crank cycle has finished';
  return `${what} ${seconds(sinceMs)} ago, beyond the ${seconds(stalledAfterMs)} bound (poll interval + worst-case cycle): the loop is stuck; restart the server`;
}

/**
 * Newest first, so that the head of last_error (what a status line or a truncated view shows) is
 * what fails now: the failing attempt, the latest failed cycle, fees, endpoints; then what stays
 * until it is resolved; a second signer's signature, an event that holds /health degraded for
 * 15 minutes, comes last, so it never hides newer trouble.
 */
function degradations({ facts, settings, foreignSignerHoldMs, retrying, endpointProblems }: HealthInput, nowMs: number): string[] {
  const problems: string[] = [];
  if (retrying !== null) problems.push(`retrying after a failed attempt: ${retrying}`);
  if (facts.lastError !== null) problems.push(facts.lastError);
  for (const chain of chainsShortOfFees(facts.fees)) {
    const { balance, need } = facts.fees![chain];
    problems.push(
      `the authority holds ${balance} lamports on the ${chainName(chain)} chain, less than the ${need} lamports this cycle's transactions there need in fees: nothing is sent there until it is funded`,
    );
  }
  for (const chain of chainsBelowMinimum(facts.fees, settings.minBalanceLamports)) {
    if (chainsShortOfFees(facts.fees).includes(chain)) continue;
    problems.push(
      `the authority holds ${facts.fees![chain].balance} lamports on the ${chainName(chain)} chain, below BRIDGE_MIN_BALANCE_LAMPORTS (${settings.minBalanceLamports}): fund it before its fees run out`,
    );
  }
  problems.push(...endpointProblems);
  const twin = twinProblem(facts.role, settings.handoffMs);
  if (twin !== null) problems.push(twin);
  const { lease } = facts;
  if (lease.status === 'taken' && nowMs - (lease.sinceMs ?? nowMs) <= foreignSignerHoldMs) {
    problems.push(
      'the signing lease this server held was taken by another instance signing with the same key; this server stands by. ' +
        'Run only one instance per signer (SPEC §8): find and stop the other one',
    );
  }
  const foreign = facts.foreignSigner;
  const halted = isHalted(settings.onForeignSigner, foreign);
  if (foreign !== null && (halted || nowMs - foreign.seenAtMs <= foreignSignerHoldMs)) {
    problems.push(
      `${keyUseText(foreign)} on the ${chainName(foreign.chain)} chain (slot ${foreign.slot}) was signed with this authority's key but not by this server: ` +
        'another process signs with the same key; run only one instance per signer (SPEC §8): find and stop the other one' +
        (halted ? '; this server submits nothing until it is restarted (BRIDGE_ON_FOREIGN_SIGNER=halt)' : ''),
    );
  }
  return problems;
}

/** "attempt 1 of 3 failed: <error>", for /health from a failed attempt until the action lands or gives up. */
export function retryingAttempt(attempt: number, maxAttempts: number, error: string | undefined): string {
  return `attempt ${attempt} of ${maxAttempts} failed: ${error ?? 'unknown error'}`;
}

// The signer and the checks that are off keep their types in src/chain: `satisfies` here and
// crankHealth's assignment from them (below) hold each pair together in both directions.

/**
 * The signer as the public /health names it: `file`, `pkcs11` with the token's label and its
 * session (never a PIN), or the key service's kind alone. A key's ARN or resource name says which
 * account and project hold it: the startup line and `ops` (operators only) name it, /health not.
 */
type HealthSigner = Exclude<SignerDescription, { key: string }> | { kind: KeyServiceKind };

const signerSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('file') }),
  z.strictObject({ kind: z.literal('pkcs11'), token: z.string(), session: z.enum(['open', 'lost']) }),
  z.strictObject({ kind: z.enum(['aws-kms', 'gcp-kms', 'vault-transit']) }),
]) satisfies z.ZodType<HealthSigner>;

function healthSigner(signer: SignerDescription): HealthSigner {
  return 'key' in signer ? { kind: signer.kind } : signer;
}

const checkOffSchema = z.strictObject({
  check: z.literal('second_signer'),
  chain: z.enum(['source', 'target']),
  reason: z.string(),
}) satisfies z.ZodType<CheckOff>;

export const LIFETIME_MODES = ['nonce', 'blockhash'] as const satisfies readonly LifetimeMode[];

const landingSummarySchema = z.strictObject({
  transactions: z.int(),
  landed: z.int(),
  first_version_rate: z.number().nullable(),
  slots_p50: z.int().nullable(),
  slots_p90: z.int().nullable(),
  versions_per_landed: z.number().nullable(),
}) satisfies z.ZodType<LandingSummary>;

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
  landing_mode: z.strictObject({ source: z.enum(LIFETIME_MODES), target: z.enum(LIFETIME_MODES) }).optional(),
  /**
   * An enabled crank with the lease in use only (absent under BRIDGE_HANDOFF_SECS=0 or a dry run): the signing lease (docs/crank.md, "Role"): its status, since when (unix
   * seconds), while `waiting` the second from which this instance may take it over, and why the
   * latest taking did not take (or why the account is unusable).
   */
  lease: z
    .strictObject({ status: z.enum(LEASE_STATUSES), since: z.int().nullable(), may_take_at: z.int().optional(), note: z.string().optional() })
    .optional(),
  /** An enabled crank only: versions of this server's transactions that may still land, per chain (docs/chain-client.md, "Bounded in flight"). */
  versions_in_flight: z.strictObject({ source: z.int().nonnegative(), target: z.int().nonnegative() }).optional(),
  /** An enabled crank only: how each chain's transactions landed over the last ten minutes (docs/chain-client.md, "Landing measured"). */
  landing: z.strictObject({ source: landingSummarySchema, target: landingSummarySchema }).optional(),
  /** An enabled crank only: what the watchdog holds (docs/operating.md "The watchdog"): why each chain's signing is held (null: not), and the transfer the flow breaker holds. */
  watchdog: z
    .strictObject({
      held: z.strictObject({ source: z.string().nullable(), target: z.string().nullable() }),
      flow_held: z
        .strictObject({
          id: z.string(),
          index: z.int(),
          mint: z.string(),
          amount: z.string(),
          carried: z.string(),
          limit: z.string(),
          window_hours: z.int(),
        })
        .nullable(),
    })
    .optional(),
});
export type CrankHealth = z.infer<typeof crankHealthSchema>;

/** What GET /health answers beside the service name: the status and the crank object, from one verdict. */
export interface HealthReport {
  status: HealthStatus;
  crank: CrankHealth;
}

/** /health's crank object of the service used when no runtime configuration is present. */
export const DISABLED_CRANK_HEALTH: CrankHealth = {
  enabled: false,
  last_run_at: null,
  last_success_at: null,
  last_error: null,
  last_action: null,
  total_actions_submitted: 0,
};

/** What /health adds beside the facts: which key signs, dry run, checks that are off, how transactions land. */
export interface HealthExtras {
  signer: SignerDescription | undefined;
  dryRun: boolean;
  checksOff: CheckOff[];
  lifetimeModes: Record<ChainSide, LifetimeMode>;
  /** While the lease is `waiting`: when this instance may take it over (role.ts mayTakeOverAtMs). */
  leaseMayTakeAtMs: number;
  versionsInFlight: Record<ChainSide, number>;
  landing: Record<ChainSide, LandingSummary>;
  /** What the watchdog holds; absent without a watchdog. */
  watchdog?: CrankHealth['watchdog'];
}

/** /health's `crank` object, in unix seconds: last_error says everything the verdict found wrong. */
export function crankHealth(facts: HealthFacts, active: boolean, verdict: HealthVerdict, extras: HealthExtras): CrankHealth {
  const { problems } = verdict;
  return {
    enabled: active,
    last_run_at: toUnixSeconds(facts.lastRunAtMs),
    last_success_at: toUnixSeconds(facts.lastSuccessAtMs),
    last_error: problems.length > 0 ? problems.join('; ') : null,
    last_action: facts.lastAction,
    total_actions_submitted: facts.transactionsLanded,
    role: facts.role.role,
    role_since: toUnixSeconds(facts.role.sinceMs),
    ...(extras.signer === undefined ? {} : { signer: healthSigner(extras.signer) }),
    ...(extras.dryRun ? { dry_run: true } : {}),
    ...(extras.checksOff.length > 0 ? { checks_off: extras.checksOff } : {}),
    landing_mode: extras.lifetimeModes,
    landing: extras.landing,
    versions_in_flight: extras.versionsInFlight,
    ...(facts.lease.status === 'off' ? {} : { lease: leaseView(facts.lease, extras.leaseMayTakeAtMs) }),
    ...(extras.watchdog === undefined ? {} : { watchdog: extras.watchdog }),
  };
}

function leaseView(lease: LeaseFacts, mayTakeAtMs: number): NonNullable<CrankHealth['lease']> {
  return {
    status: lease.status,
    since: toUnixSeconds(lease.sinceMs),
    // Rounded up, as may_sign_at: a "not before" must not name a second at which it still waits.
    ...(lease.status === 'waiting' ? { may_take_at: Math.ceil(mayTakeAtMs / 1000) } : {}),
    ...(lease.note === null ? {} : { note: lease.note }),
  };
}

function toUnixSeconds(ms: number | null): number | null {
  return ms === null ? null : Math.floor(ms / 1000);
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}
