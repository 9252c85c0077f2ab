import type { SigningLease } from '../chain/port/bridge-chains.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import { setLongTimeout } from '../time.js';
import type { LeaseFacts } from './lease.js';

/**
 * A standby waiting on a held lease looks at the lease account alone every LEASE_WATCH_MS
 * between its cycles, and starts a cycle (POLL) as soon as the lease reads free: a graceful
 * handover then costs at most LEASE_WATCH_MS plus one cycle, not a poll interval. One
 * getAccountInfo of one 80-byte account per look; a failed look is ignored (the next cycle reads
 * the lease anyway). Nothing is decided here: the cycle's read decides, as always.
 */
const LEASE_WATCH_MS = 2_000;

export interface LeaseWatchOptions {
  lease: SigningLease;
  /** The crank's lease facts right now, and whether a cycle runs. */
  state(): { lease: LeaseFacts; busy: boolean };
  /** Start a cycle now. */
  poll(): void;
  logger: Logger;
}

/** Starts the watch; the returned function stops it (and aborts a look in flight). */
export function watchLease(options: LeaseWatchOptions): () => void {
  const stop = new AbortController();
  let timer = setLongTimeout(look, LEASE_WATCH_MS);

  async function look(): Promise<void> {
    const { lease, busy } = options.state();
    if (lease.status === 'waiting' && !busy) {
      try {
        const seen = await options.lease.read(stop.signal);
        if (seen.state === 'free' && !stop.signal.aborted) options.poll();
      } catch (err) {
        if (!stop.signal.aborted)
          options.logger.debug({ err: describeError(err) }, 'crank: a look at the signing lease failed; the next cycle reads it');
      }
    }
    if (!stop.signal.aborted) timer = setLongTimeout(look, LEASE_WATCH_MS);
  }

  return () => {
    stop.abort(new Error('the crank stopped'));
    timer.clear();
  };
}
