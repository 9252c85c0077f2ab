import type { AuthorityView, LeaseObservation } from '../chain/port/bridge-chains.js';
import { pendingCounts, type CrankSettings, type CycleRead } from './crank-context.js';
import { feeFacts, unlandedSinceAfterRead, type ChainFees, type HealthFacts } from './health.js';
import type { CyclePlan } from './planning/cycle-plan.js';
import { leaseAfterRead, type LeaseFacts } from './lease.js';
import type { CrankEmitted } from './crank-types.js';
import {
  afterUnknownHistory,
  foreignTransactions,
  mayTakeOverAtMs,
  quietWindowMs,
  roleAfterRead,
  type ForeignTransaction,
  type RoleChange,
  type RoleFacts,
} from './role.js';

/**
 * Who this instance is after one cycle's read (docs/crank.md, "Role"): the key's transactions
 * another process signed (role.ts), history left unchecked (the quiet window starts again,
 * bounded in nonce mode), and the signing lease (lease.ts). Pure; the machine's recordRead
 * applies it.
 */

export interface ReadForRole {
  authority: AuthorityView;
  /** The lease account as this cycle read it; absent when the lease is off. */
  lease?: LeaseObservation;
  /** Every chain lands in nonce mode: another instance cannot sign without moving a nonce. */
  nonceSignal: boolean;
  /** What the read planned: whether work waits (a held lease is taken over only after work waited the window). */
  plan?: CyclePlan;
}

export interface RoleAfterRead {
  role: RoleFacts;
  lease: LeaseFacts;
  /** Transactions reported as a second signer's: seen while this instance was active. */
  foreign: ForeignTransaction[];
  change: RoleChange | null;
  /** The standby's quiet window started again because history was left unchecked: what the runtime is told. */
  waits: Extract<CrankEmitted, { type: 'standbyWaits' }> | null;
}

export function decideAfterRead(
  current: { role: RoleFacts; lease: LeaseFacts },
  read: ReadForRole,
  settings: CrankSettings,
  atMs: number,
): RoleAfterRead {
  const unknown = afterUnknownHistory(current.role, read.authority, settings, atMs, read.nonceSignal);
  const foreign = foreignTransactions(read.authority, atMs);
  const decided = roleAfterRead(unknown.facts, foreign, settings, atMs);
  const work = read.plan !== undefined && Object.values(pendingCounts(read.plan)).some((pending) => pending > 0);
  const leaseRead = { seen: read.lease, sighted: foreign.length > 0, work };
  const leased = leaseAfterRead(current.lease, leaseRead, unknown.facts, decided, atMs, quietWindowMs(settings.pollIntervalMs));
  const waits = unknown.restarted
    ? {
        type: 'standbyWaits' as const,
        reason: 'history_incomplete' as const,
        firstOfStretch: current.role.waitReason !== 'history_incomplete',
        mayTakeOverAtMs: mayTakeOverAtMs(leased.facts, settings, atMs),
      }
    : null;
  return { role: leased.facts, lease: leased.lease, foreign: decided.foreign, change: leased.change, waits };
}

/**
 * The health facts after a read: the role and the lease decided, the fees the plan needs against
 * the balances, the second signer kept, and since when planned work has waited unlanded.
 */
export function healthAfterRead(
  health: HealthFacts,
  read: CycleRead,
  decided: RoleAfterRead,
  settings: CrankSettings,
  atMs: number,
): HealthFacts & { fees: ChainFees } {
  const pending = Object.values(pendingCounts(read.plan)).reduce((sum, count) => sum + count, 0);
  const submits = decided.role.role === 'active' && !settings.dryRun;
  return {
    ...health,
    fees: feeFacts(read.authority, read.fees),
    foreignSigner: decided.foreign[0] ?? health.foreignSigner,
    role: decided.role,
    lease: decided.lease,
    unlandedSinceMs: unlandedSinceAfterRead(health.unlandedSinceMs, pending, submits, atMs),
  };
}
