import type { SignerDescription } from '../chain/authority-signer.js';
import type { CheckOff } from '../chain/bridge-chains.js';
import type { HealthStatus } from './health-status.js';
import type { CrankActivity } from './crank-activity.js';
import type { CrankRole } from './authority-role.js';
import type { CrankReport } from './crank-types.js';

/**
 * What the HTTP layer and the process wiring see of the crank: a snapshot for /health, one
 * on-demand cycle for POST /crank/once, its current state and recent activity for
 * GET /crank/ui, and a bounded stop for shutdown. The machine's actor
 * implements it; the HTTP layer never touches the actor directly.
 */

/** `crank` object of BridgeHealthSnapshot (SPEC §2.2), in the wire's snake_case. */
export interface CrankHealth {
  enabled: boolean;
  last_run_at: number | null;
  last_success_at: number | null;
  last_error: string | null;
  last_action: string | null;
  total_actions_submitted: number;
  /** Present (true) only under BRIDGE_DRY_RUN: an extension beside SPEC §2.2's fields. */
  dry_run?: true;
  /** An enabled crank only: `standby` submits nothing while another instance signs (docs/crank.md, "Role"). */
  role?: CrankRole;
  /** Unix seconds at which the role began; null before the first read. */
  role_since?: number | null;
  /** With runtime configuration: which key signs (never a PIN); an extension beside SPEC §2.2's fields. */
  signer?: SignerDescription;
  /** Present only while some check is off (no history on a chain's endpoints): what, where and why. Not a failure: the status is unchanged. */
  checks_off?: CheckOff[];
}

/** `started`: the crank was idle and a cycle began; `coalesced`: a cycle was already running. */
export type CrankPollOutcome = 'started' | 'coalesced';

export type { CrankReport };

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
