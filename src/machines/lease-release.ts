import type { BridgeChains, SigningLease } from '../chain/port/bridge-chains.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import type { LeaseFacts } from './lease.js';

/** What a graceful stop knows when it comes to the lease. */
export interface LeaseReleaseInput {
  lease: SigningLease | undefined;
  held: LeaseFacts;
  chains: Pick<BridgeChains, 'pendingTransactions' | 'versionsInFlight' | 'voidInFlight'>;
  log: Logger;
  /** The cycle ran to its end (false: it was cut at the shutdown deadline). */
  settled: boolean;
  /** What is left of the shutdown deadline. */
  remainingMs: number;
}

/**
 * A graceful stop hands over: once the cycle ran to its end and nothing this process signed can
 * land any more (durable-nonce versions voided, the rest settled), the lease is released within
 * what is left of the deadline, and a standby takes it at its next look. Half of that time goes
 * to voiding and settling, the rest to the release. A cycle cut at the deadline, or a transaction
 * still unresolved, keeps the lease: the standby then waits the quiet window, as after a crash.
 */
export async function releaseLeaseOnStop({ lease, held, chains, log, settled, remainingMs }: LeaseReleaseInput): Promise<void> {
  if (lease === undefined || held.status !== 'held' || held.value === null) return;
  if (!settled || remainingMs <= 0) {
    log.warn(
      { settled, remainingMs },
      'crank: keeping the signing lease: the cycle was cut; a standby of this key waits the quiet window, as after a crash',
    );
    return;
  }
  const deadlineAtMs = Date.now() + remainingMs;
  try {
    if (!(await inFlightSettled(chains, log, remainingMs / 2))) return;
    const released = await lease.release(held.value, AbortSignal.timeout(Math.max(1, deadlineAtMs - Date.now())));
    if (released.released)
      log.info(
        { advance: released.advance, signature: released.signature, slot: released.slot },
        'crank: released the signing lease: a standby of this key takes it at its next look',
      );
    else log.warn({ why: released.why }, 'crank: the signing lease was not released; a standby of this key waits the quiet window');
  } catch (err) {
    log.warn(
      { err: describeError(err) },
      'crank: releasing the signing lease failed; a standby of this key waits the quiet window, as after a crash',
    );
  }
}

/** True once nothing this process signed can land any more: only then may a standby sign without racing one of its versions. */
async function inFlightSettled(chains: LeaseReleaseInput['chains'], log: Logger, budgetMs: number): Promise<boolean> {
  const versions = chains.versionsInFlight();
  if (chains.pendingTransactions() === 0 && versions.source + versions.target === 0) return true;
  const settled = await chains.voidInFlight(AbortSignal.timeout(Math.max(1, budgetMs)));
  if (settled.source.unresolved + settled.target.unresolved === 0) return true;
  log.warn(
    { settled },
    'crank: keeping the signing lease: transactions still in flight may land; a standby of this key waits the quiet window, as after a crash',
  );
  return false;
}
