import { MAX_TIMER_DELAY_MS } from '../time.js';

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
  const capMs = Math.min(MAX_TIMER_DELAY_MS, Math.max(RETRY_BACKOFF_CAP_MS, baseMs));
  // 2^1023 is the largest finite power; beyond that the cap applies anyway.
  const exponent = Math.min(Math.max(failedAttempts - 1, 0), 1023);
  const ceilingMs = Math.min(capMs, baseMs * 2 ** exponent);
  const halfMs = ceilingMs / 2;
  const delayMs = Math.floor(halfMs + random() * halfMs);
  return ceilingMs === 0 ? 0 : Math.max(1, delayMs);
}
