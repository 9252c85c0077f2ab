import { DEFAULT_SUBMIT_TIMING } from '../chain/client/transaction-sender.js';
import { RETRY_BACKOFF_CAP_MS } from './backoff.js';

/**
 * How long one crank action and one whole cycle can take at most, from the settings.
 *
 * PROVISIONAL: a minimal version with the agreed API, written so /health's `stalled` bound
 * has a formula to call; the bounded-attempts work (branch i9a) replaces this file at merge.
 * Its model: a read is at most READ_ROUNDS sequential RPC rounds of `rpcTimeoutMs`; an attempt
 * is a re-read, then one transaction signed (one RPC round) and confirmed within the sender's
 * confirm timeout (120 s); attempts are separated by the longest backoff (the full,
 * unjittered delay). It does not yet bound an attempt that lands several batches one after
 * the other, each just before its confirm timeout.
 */

export interface CycleBoundSettings {
  maxAttempts: number;
  retryBackoffMs: number;
  rpcTimeoutMs: number;
}

/** Header reads, entry windows, the authority's history pages: sequential rounds of one read. */
const READ_ROUNDS = 8;
/** ack_deposit, ack_withdraw, cleanup_deposit. */
const ACTIONS_PER_CYCLE = 3;

/** One action: every attempt (re-read, sign, confirm) and the backoffs between them. */
export function worstCaseActionMs(settings: CycleBoundSettings): number {
  const { maxAttempts, retryBackoffMs, rpcTimeoutMs } = settings;
  const attemptMs = (READ_ROUNDS + 1) * rpcTimeoutMs + DEFAULT_SUBMIT_TIMING.confirmTimeoutMs;
  let backoffsMs = 0;
  for (let failed = 1; failed < maxAttempts; failed++) {
    const ceilingMs = Math.min(Math.max(RETRY_BACKOFF_CAP_MS, retryBackoffMs), retryBackoffMs * 2 ** Math.min(failed - 1, 1023));
    backoffsMs += ceilingMs;
    // Past the cap every further backoff is the cap: no need to loop over a huge attempt count.
    if (ceilingMs >= Math.max(RETRY_BACKOFF_CAP_MS, retryBackoffMs)) {
      backoffsMs += (maxAttempts - 1 - failed) * ceilingMs;
      break;
    }
  }
  return maxAttempts * attemptMs + backoffsMs;
}

/** One cycle: the read, then the three actions. */
export function worstCaseCycleMs(settings: CycleBoundSettings): number {
  return READ_ROUNDS * settings.rpcTimeoutMs + ACTIONS_PER_CYCLE * worstCaseActionMs(settings);
}
