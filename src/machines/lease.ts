import type { LeaseObservation } from '../chain/port/bridge-chains.js';
import type { RoleFacts, RoleChange, RoleSettings } from './role.js';

/**
 * The signing lease as the crank sees it (docs/crank.md, "Role"; the account itself and what
 * proves what are docs/chain-client.md, "The lease"). With the lease in use an instance is active
 * only while it holds the lease. It takes a free lease at once, unless another instance signed
 * while the lease read free (one without the lease: an older version, or BRIDGE_HANDOFF_SECS=0),
 * which it waits out for the quiet window. It takes over a lease held by another value only once
 * the quiet window has passed AND work has waited that long (role.ts): a holder with nothing to
 * sign is not quiet, it is idle, and keeps the lease. A holder re-reads the lease every cycle;
 * another value (or none) is checked, and only proof stands it down; anything less is a doubt and
 * it keeps signing. Pure: the leasing step's effects run in the `keepLease` actor (crank-service.ts).
 */

/**
 * `off`: no lease (BRIDGE_HANDOFF_SECS=0, a dry run, a chain client without one); `unknown`
 * before the first read; `held` by this instance; `released`: free, this instance takes it;
 * `waiting`: held by another value, this instance waits the quiet window; `taken`: this
 * instance held it and another took it; `unusable`: the account is something else.
 */
export const LEASE_STATUSES = ['off', 'unknown', 'held', 'released', 'waiting', 'taken', 'unusable'] as const;
type LeaseStatus = (typeof LEASE_STATUSES)[number];

export interface LeaseFacts {
  status: LeaseStatus;
  /** held: this instance's nonce value; waiting, taken: the other holder's (null when none). */
  value: string | null;
  /** When this status began; null before the first read. */
  sinceMs: number | null;
  /** What the leasing step does in this cycle; null: nothing. */
  want: LeaseWant | null;
  /** Why the latest taking did not take, or an unusable account's reason; null otherwise. */
  note: string | null;
  /**
   * When a taking of this instance was last refused; null once one took. A lease that reads free
   * after that is taken only once the quiet window has passed since: a node that keeps saying
   * "free" while another instance holds it costs at most one refused taking (5,000 lamports) per
   * window, not one per cycle.
   */
  refusedAtMs: number | null;
  /**
   * The latest read that saw another instance sign while the lease read free in that read and
   * in the one before (the previous holder's last votes land before its release, so they come
   * with a lease seen held before, unless its whole tenure fell between two free reads or an
   * endpoint lied "free": then they cost one window, docs/chain-client.md): an instance without
   * the lease signs, and a free lease is taken only once the quiet window has passed since.
   * Null: none seen.
   */
  freeSignerAtMs: number | null;
  /** A read showed the lease held by another value since this instance last held it: a free lease after that was released, not never taken. */
  sawHolder: boolean;
  /** The first read of the current stretch of reads that found work (votes or cleanups) to do; null when the latest found none. */
  workSinceMs: number | null;
}

/** `take`: the lease as `seen` (free, or held by a quiet holder's value); `confirm`: look for proof before believing a holder lost it. */
export type LeaseWant = { kind: 'take'; seen: LeaseObservation } | { kind: 'confirm'; seen: LeaseObservation; value: string };

/** What the leasing step found: `doubt`, a read said the lease moved and nothing proves it; `lost`, proven (`proof` says how). */
export type LeaseStepOutcome =
  | { kind: 'took'; value: string; slot: number; signature: string }
  | { kind: 'not_taken'; seen: LeaseObservation; why: string }
  | { kind: 'doubt'; why: string }
  | { kind: 'lost'; seen: LeaseObservation; proof: string };

export function initialLease(settings: RoleSettings & { dryRun: boolean }): LeaseFacts {
  return {
    status: settings.handoffMs === 0 || settings.dryRun ? 'off' : 'unknown',
    value: null,
    sinceMs: null,
    want: null,
    note: null,
    refusedAtMs: null,
    freeSignerAtMs: null,
    sawHolder: false,
    workSinceMs: null,
  };
}

function withStatus(lease: LeaseFacts, status: LeaseStatus, value: string | null, atMs: number, want: LeaseWant | null = null): LeaseFacts {
  const same = lease.status === status && lease.value === value;
  return { ...lease, status, value, sinceMs: same ? lease.sinceMs : atMs, want, note: same ? lease.note : null };
}

/** What one cycle's read says besides the lease: whether another instance's transaction was seen, and whether work waits. */
export interface LeaseRead {
  seen: LeaseObservation | undefined;
  sighted: boolean;
  work: boolean;
}

/**
 * The lease after a cycle's read, and the role with it: `decided` is the role the quiet window
 * alone gives (role.ts), `before` the role before the read. A holder keeps its role (another
 * signer seen still stands it by); anyone else is a standby whatever the window says, and wants
 * the lease when it is free (and no instance without it signed within the window), or when it
 * is held, the window has passed and work has waited the window too.
 */
export function leaseAfterRead(
  lease: LeaseFacts,
  { seen, sighted, work }: LeaseRead,
  before: RoleFacts,
  decided: { facts: RoleFacts; change: RoleChange | null },
  atMs: number,
  windowMs: number,
): { lease: LeaseFacts; facts: RoleFacts; change: RoleChange | null } {
  if (lease.status === 'off' || seen === undefined) return { lease, ...decided };
  const worked: LeaseFacts = { ...lease, workSinceMs: work ? (lease.workSinceMs ?? atMs) : null };
  if (lease.status === 'held') {
    const same = seen.state === 'held' && seen.value === lease.value;
    return { lease: { ...worked, want: same ? null : { kind: 'confirm', seen, value: lease.value! } }, ...decided };
  }
  const windowPassed = decided.facts.role === 'active';
  // Not the holder: a standby, as it was before this read (the window passing is not a takeover yet).
  const facts = windowPassed ? { ...decided.facts, role: 'standby' as const, sinceMs: before.sinceMs ?? atMs } : decided.facts;
  const change = windowPassed ? null : decided.change;
  switch (seen.state) {
    case 'free': {
      const freeBefore = lease.status === 'released';
      const marked: LeaseFacts = { ...worked, freeSignerAtMs: sighted && freeBefore ? atMs : worked.freeSignerAtMs };
      const since = Math.max(marked.refusedAtMs ?? -Infinity, marked.freeSignerAtMs ?? -Infinity);
      return { lease: withStatus(marked, 'released', null, atMs, atMs >= since + windowMs ? { kind: 'take', seen } : null), facts, change };
    }
    case 'held': {
      const waited = windowPassed && worked.workSinceMs !== null && atMs >= worked.workSinceMs + windowMs;
      return {
        lease: withStatus(
          { ...worked, sawHolder: true },
          lease.status === 'taken' && lease.value === seen.value ? 'taken' : 'waiting',
          seen.value,
          atMs,
          waited ? { kind: 'take', seen } : null,
        ),
        facts,
        change,
      };
    }
    case 'unusable': {
      // The leasing step asks the other endpoints (once per window): one node calling the lease unusable must not keep a start out for good.
      const ask = atMs >= (worked.refusedAtMs ?? -Infinity) + windowMs;
      return { lease: { ...withStatus(worked, 'unusable', null, atMs, ask ? { kind: 'take', seen } : null), note: seen.reason }, facts, change };
    }
  }
}

/**
 * The lease and the role after the leasing step. Taken: active from now. Not taken: whoever took
 * it instead is alive, so the quiet window starts again, and a lease that reads free is not taken
 * again before it has passed (`refusedAtMs`). Lost (proven): a standby at once. A doubt changes
 * nothing: the holder keeps signing (a twin's votes are still caught by the nonces and the
 * history, role.ts).
 */
export function leaseAfterStep(
  lease: LeaseFacts,
  role: RoleFacts,
  outcome: LeaseStepOutcome,
  atMs: number,
): { lease: LeaseFacts; role: RoleFacts; change: RoleChange | null } {
  switch (outcome.kind) {
    case 'took': {
      // Free: `released` when a holder was seen before (it handed the lease over), `free` when none ever was.
      const how = lease.status !== 'released' ? 'taken_over' : lease.sawHolder ? 'released' : 'free';
      const active: RoleFacts = { ...role, role: 'active', sinceMs: atMs, extraQuietMs: 0, otherSigner: null, waitReason: null };
      return {
        lease: { ...withStatus(lease, 'held', outcome.value, atMs), refusedAtMs: null, freeSignerAtMs: null, sawHolder: false },
        role: active,
        change: { kind: 'taking_over', quietMs: atMs - (role.quietSinceMs ?? atMs), lease: how },
      };
    }
    case 'not_taken': {
      const seen = outcome.seen;
      const status = seen.state === 'held' ? 'waiting' : seen.state === 'free' ? 'released' : 'unusable';
      const next = { ...withStatus(lease, status, seen.state === 'held' ? seen.value : null, atMs), note: outcome.why, refusedAtMs: atMs };
      // Whoever took it instead is alive (or a node's answers mislead): the quiet window starts again.
      return { lease: next, role: { ...role, quietSinceMs: atMs, heardSinceMs: atMs }, change: null };
    }
    case 'doubt':
      return { lease: { ...lease, want: null, note: outcome.why }, role, change: null };
    case 'lost': {
      const holder = outcome.seen.state === 'held' ? outcome.seen.value : null;
      const standby: RoleFacts = { ...role, role: 'standby', sinceMs: atMs, quietSinceMs: atMs, heardSinceMs: atMs, waitReason: 'other_signer' };
      return { lease: withStatus(lease, 'taken', holder, atMs), role: standby, change: { kind: 'lease_lost', holder, proof: outcome.proof } };
    }
  }
}

/** The leasing step failed (a read or a send): nothing is believed, nothing changes; the next cycle reads again. */
export function leaseAfterStepFailure(
  current: { lease: LeaseFacts; role: RoleFacts },
  error: string,
): { lease: LeaseFacts; role: RoleFacts; change: null } {
  return { lease: { ...current.lease, want: null, note: `the leasing step failed: ${error}` }, role: current.role, change: null };
}

/**
 * When a standby waiting on a held lease may take it over at the earliest: the quiet window's
 * end (`windowEndsAtMs`, role.ts), and a window after work began to wait (or after `nowMs`,
 * should work arrive now: an idle holder keeps the lease).
 */
export function leaseMayTakeAtMs(lease: LeaseFacts, windowEndsAtMs: number, windowMs: number, nowMs: number): number {
  return Math.max(windowEndsAtMs, (lease.workSinceMs ?? nowMs) + windowMs);
}
