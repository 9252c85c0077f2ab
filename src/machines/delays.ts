import type { ChainBounds } from '../chain/port/bridge-chains.js';
import { MAX_TIMER_DELAY_MS } from '../time.js';

/**
 * Every wait of the crank and its bounds, as pure functions of the settings: the machine's two
 * named delays (`nextCycleDelay`: the idle timer; `retryDelay`: the backoff before a retry),
 * and how long an attempt, an action and a cycle can take at most (the attempt deadline
 * startCrank sets, the `stalled` bound of /health). docs/crank.md, "Bounds".
 */

// The idle timer.

/**
 * When the next cycle starts (the machine's `idle` state arms one timer at a time).
 * Cycles run every BRIDGE_POLL_INTERVAL_SECS from the end of the previous one. The interval
 * may be longer than one Node timer holds (2^31-1 ms, about 24.8 days): idle then waits in
 * chunks of at most that length, counting what it has waited, and re-arms until the whole
 * interval has passed. A cycle that left a backlog is followed at once (delay 0, a fresh
 * macrotask, so HTTP requests and timers run in between).
 */

export interface PollSchedule {
  pollIntervalMs: number;
  /** Time idle has already waited since the last cycle ended, in whole chunks. */
  idleWaitedMs: number;
  /** The last cycle left work beyond one batch and the back-to-back bound allows another. */
  drainBacklog: boolean;
}

/** The delay for the next idle timer. */
export function nextCycleDelay(schedule: PollSchedule): number {
  if (schedule.drainBacklog) return 0;
  return Math.min(remainingWait(schedule), MAX_TIMER_DELAY_MS);
}

/** When the idle timer fires: does it end the wait (true) or was it one chunk of a longer one? */
export function isCycleDue(schedule: PollSchedule): boolean {
  return schedule.drainBacklog || remainingWait(schedule) <= MAX_TIMER_DELAY_MS;
}

/** The wait after one more chunk that did not end it. */
export function idleWaitAfterChunk(schedule: PollSchedule): number {
  return schedule.idleWaitedMs + MAX_TIMER_DELAY_MS;
}

function remainingWait(schedule: PollSchedule): number {
  return Math.max(0, schedule.pollIntervalMs - schedule.idleWaitedMs);
}

// The retry backoff.

/**
 * Delay before retrying a failed action (SPEC §3 failure rule): exponential from
 * BRIDGE_CRANK_RETRY_BACKOFF_MS, capped, with "equal jitter" (half fixed, half random).
 * The fixed half keeps a floor under every wait so a failing RPC is never hammered; the random
 * half keeps the authorities of one bridge, which all see the same failures, from retrying in
 * lockstep.
 */

/** Backoffs stop growing here (unless the configured base is already longer). */
export const RETRY_BACKOFF_CAP_MS = 60_000;

/**
 * @param failedAttempts attempts of this action that failed so far (>= 1)
 * @param random uniform in [0, 1), Math.random in production
 * @returns whole milliseconds in [d/2, d] for d = min(cap, base * 2^(failedAttempts-1)),
 *   never above 2^31-1 (one Node timer); 0 only for a base of 0 (retry at once), otherwise
 *   at least 1: Node waits 1 ms for a 0 ms timer anyway, and the delay is what is really waited
 */
export function retryBackoffDelay(failedAttempts: number, baseMs: number, random: () => number = Math.random): number {
  const ceilingMs = Math.min(MAX_TIMER_DELAY_MS, backoffCeilingMs(failedAttempts, baseMs));
  const halfMs = ceilingMs / 2;
  const delayMs = Math.floor(halfMs + random() * halfMs);
  return ceilingMs === 0 ? 0 : Math.max(1, delayMs);
}

/** The unjittered backoff after `failedAttempts` failures: min(cap, base × 2^(failedAttempts−1)), the cap at least the base. */
function backoffCeilingMs(failedAttempts: number, baseMs: number): number {
  // 2^1023 is the largest finite power; beyond that the cap applies anyway.
  const exponent = Math.min(Math.max(failedAttempts - 1, 0), 1023);
  return Math.min(Math.max(RETRY_BACKOFF_CAP_MS, baseMs), baseMs * 2 ** exponent);
}

// The bounds.

/**
 * How long one attempt, one action and one whole cycle can take at most, from the settings and
 * what the chain client says its calls take (the port's ChainBounds, computed by
 * src/chain/client/chain-bounds.ts: `cycle read`, `life`; docs/crank.md, "Bounds"):
 *
 * - attempt = life: startCrank aborts an attempt at that deadline (a transaction left without an
 *   outcome stays pending and the next attempt resolves it first), so batches that land one
 *   after the other cannot stretch an attempt beyond one transaction's life.
 * - action = maxAttempts × attempt + (maxAttempts − 1) × (backoff ceiling + cycle read).
 * - cycle = cycle read + 3 actions.
 */

export interface CycleBoundSettings {
  maxAttempts: number;
  retryBackoffMs: number;
}

/** ack_deposit, ack_withdraw, cleanup_deposit. */
const ACTIONS_PER_CYCLE = 3;

/** Where startCrank cuts an attempt: one transaction's life. */
export function attemptDeadlineMs(chain: ChainBounds): number {
  return chain.transactionLifeMs;
}

/** The longest backoff before each retry, summed: the full, unjittered delay of retryBackoffDelay. */
function backoffsMs(settings: Pick<CycleBoundSettings, 'maxAttempts' | 'retryBackoffMs'>): number {
  const { maxAttempts, retryBackoffMs } = settings;
  const capMs = Math.max(RETRY_BACKOFF_CAP_MS, retryBackoffMs);
  let totalMs = 0;
  for (let failed = 1; failed < maxAttempts; failed++) {
    const ceilingMs = backoffCeilingMs(failed, retryBackoffMs);
    totalMs += ceilingMs;
    // Past the cap every further backoff is the cap: no need to loop over a huge attempt count.
    if (ceilingMs >= capMs) return totalMs + (maxAttempts - 1 - failed) * capMs;
  }
  return totalMs;
}

/** One action: every attempt, and before each retry its backoff and a fresh cycle read. */
export function worstCaseActionMs(settings: CycleBoundSettings, chain: ChainBounds): number {
  const retries = settings.maxAttempts - 1;
  return settings.maxAttempts * attemptDeadlineMs(chain) + backoffsMs(settings) + retries * chain.cycleReadMs;
}

/** One cycle: the read, then the three actions. */
export function worstCaseCycleMs(settings: CycleBoundSettings, chain: ChainBounds): number {
  return chain.cycleReadMs + ACTIONS_PER_CYCLE * worstCaseActionMs(settings, chain);
}
