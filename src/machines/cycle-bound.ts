import { cycleReadMs, transactionLifeMs, type ChainBoundSettings } from '../chain/chain-bounds.js';
import { RETRY_BACKOFF_CAP_MS } from './backoff.js';

/**
 * How long one attempt, one action and one whole cycle can take at most, from the settings and
 * what the chain layer says its calls take (src/chain/chain-bounds.ts: `read`, `cycle read`,
 * `life`; docs/crank.md, "Bounds"):
 *
 * - attempt = life: startCrank aborts an attempt at that deadline (a transaction left without an
 *   outcome stays pending and the next attempt resolves it first), so batches that land one
 *   after the other cannot stretch an attempt beyond one transaction's life.
 * - action = maxAttempts × attempt + (maxAttempts − 1) × (backoff ceiling + cycle read).
 * - cycle = cycle read + 3 actions.
 */

export interface CycleBoundSettings extends ChainBoundSettings {
  maxAttempts: number;
  retryBackoffMs: number;
}

/** ack_deposit, ack_withdraw, cleanup_deposit. */
const ACTIONS_PER_CYCLE = 3;

/** Where startCrank cuts an attempt: one transaction's life. */
export function attemptDeadlineMs(settings: CycleBoundSettings): number {
  return transactionLifeMs(settings);
}

/** The longest backoff before each retry, summed: the full, unjittered delay of backoff.ts. */
function backoffsMs(settings: Pick<CycleBoundSettings, 'maxAttempts' | 'retryBackoffMs'>): number {
  const { maxAttempts, retryBackoffMs } = settings;
  const capMs = Math.max(RETRY_BACKOFF_CAP_MS, retryBackoffMs);
  let totalMs = 0;
  for (let failed = 1; failed < maxAttempts; failed++) {
    const ceilingMs = Math.min(capMs, retryBackoffMs * 2 ** Math.min(failed - 1, 1023));
    totalMs += ceilingMs;
    // Past the cap every further backoff is the cap: no need to loop over a huge attempt count.
    if (ceilingMs >= capMs) return totalMs + (maxAttempts - 1 - failed) * capMs;
  }
  return totalMs;
}

/** One action: every attempt, and before each retry its backoff and a fresh cycle read. */
export function worstCaseActionMs(settings: CycleBoundSettings): number {
  const retries = settings.maxAttempts - 1;
  return settings.maxAttempts * attemptDeadlineMs(settings) + backoffsMs(settings) + retries * cycleReadMs(settings);
}

/** One cycle: the read, then the three actions. */
export function worstCaseCycleMs(settings: CycleBoundSettings): number {
  return cycleReadMs(settings) + ACTIONS_PER_CYCLE * worstCaseActionMs(settings);
}
