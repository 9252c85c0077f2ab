import type { SnapshotFrom } from 'xstate';
import type { SignerDescription } from '../chain/authority-signer.js';
import type { CheckOff, LandingMode } from '../chain/bridge-chains.js';
import type { ChainSide } from '../domain.js';
import { describeError } from '../errors.js';
import type { HealthFacts, RoleFacts } from './health-facts.js';
import type { crankMachine } from './crank-machine.js';
import type { CrankHealth, CrankRoleView } from './crank-types.js';
import { healthVerdict, type HealthVerdict } from './health-status.js';
import { mayTakeOverAtMs, type RoleSettings } from './rules.js';

/**
 * /health's view of the running crank: the verdict (health-status.ts) from the actor's snapshot
 * and the time, and the `crank` object, in unix seconds and JS numbers.
 */

/**
 * A foreign signature keeps /health degraded this long (BRIDGE_ON_FOREIGN_SIGNER=continue): long
 * enough for a scrape-based alert to see it, short enough that a rollout's seconds of overlap
 * clear on their own.
 */
export const FOREIGN_SIGNER_HOLD_MS = 15 * 60_000;

type CrankSnapshot = SnapshotFrom<typeof crankMachine>;

export interface HealthBounds {
  startedAtMs: number;
  /** Poll interval + worst-case cycle (cycle-bound.ts). */
  stalledAfterMs: number;
  foreignSignerHoldMs: number;
}

/** At least FOREIGN_SIGNER_HOLD_MS, and two polls so that a slow poll still sees it. */
export function foreignSignerHoldMs(pollIntervalMs: number): number {
  return Math.max(FOREIGN_SIGNER_HOLD_MS, 2 * pollIntervalMs);
}

/** `endpointProblems`: the chains' endpoints left out for their configuration (BridgeChains.endpointProblems). */
export function crankVerdict(snapshot: CrankSnapshot, bounds: HealthBounds, nowMs: number, endpointProblems: string[]): HealthVerdict {
  const internalError = snapshot.status === 'error' ? `the crank stopped on an internal error: ${describeError(snapshot.error)}` : null;
  const { health: facts, settings, progress } = snapshot.context;
  const enabled = snapshot.status === 'active' || internalError !== null;
  const retrying = snapshot.hasTag('degraded') ? retryingAttempt(progress.attempt, settings.maxAttempts, progress.failure?.error) : null;
  return healthVerdict({ enabled, internalError, facts, settings, retrying, endpointProblems, ...bounds }, nowMs);
}

/** What /health adds beside the facts: which key signs, dry run, checks that are off, how transactions land. */
interface HealthExtras {
  signer: SignerDescription | undefined;
  dryRun: boolean;
  checksOff: CheckOff[];
  landingModes: Record<ChainSide, LandingMode>;
}

/** /health's `crank` object: last_error says everything that is wrong. */
export function crankHealth(facts: HealthFacts, active: boolean, problems: string[], extras: HealthExtras): CrankHealth {
  const health = healthFromFacts(facts, active, problems);
  return {
    ...health,
    ...(extras.signer === undefined ? {} : { signer: extras.signer }),
    ...(extras.dryRun ? { dry_run: true } : {}),
    ...(extras.checksOff.length > 0 ? { checks_off: extras.checksOff } : {}),
    landing_mode: extras.landingModes,
  };
}

function healthFromFacts(facts: HealthFacts, active: boolean, problems: string[]): CrankHealth {
  return {
    enabled: active,
    last_run_at: toUnixSeconds(facts.lastRunAtMs),
    last_success_at: toUnixSeconds(facts.lastSuccessAtMs),
    last_error: problems.length > 0 ? problems.join('; ') : null,
    last_action: facts.lastAction,
    total_actions_submitted: facts.transactionsLanded,
    role: facts.role.role,
    role_since: toUnixSeconds(facts.role.sinceMs),
  };
}

/** The role beside the crank's answers: a standby says from when it may sign. */
export function crankRoleView(facts: RoleFacts, settings: RoleSettings, nowMs: number): CrankRoleView {
  if (facts.role === 'active') return { role: 'active' };
  // Rounded up: a "not before" must not name a second at which the standby still waits.
  return { role: 'standby', may_sign_at: Math.ceil(mayTakeOverAtMs(facts, settings, nowMs) / 1000) };
}

function toUnixSeconds(ms: number | null): number | null {
  return ms === null ? null : Math.floor(ms / 1000);
}

/** "attempt 1 of 3 failed: <error>", for /health while the action backs off. */
function retryingAttempt(attempt: number, maxAttempts: number, error: string | undefined): string {
  return `attempt ${attempt} of ${maxAttempts} failed: ${error ?? 'unknown error'}`;
}
