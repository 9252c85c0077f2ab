import { HISTORY_READ_ROUNDS } from '../chain/client/authority-history.js';
import { STATE_READ_ROUNDS } from '../chain/client/read-state.js';
import { DEFAULT_SUBMIT_TIMING } from '../chain/client/transaction-sender.js';
import { MAX_SIMULATIONS } from '../chain/client/compute-budget.js';
import { readCallBudgetMs } from '../chain/rpc/read-retry.js';
import { RETRY_BACKOFF_CAP_MS } from './backoff.js';

/**
 * How long one attempt, one action and one whole cycle can take at most, from the settings and
 * the chain's blockhash lifetime (docs/crank.md, "Bounds"). Every term is a constant of the code
 * the crank runs, imported from where it is enforced:
 *
 * - read  = readCallBudgetMs(rpcTimeoutMs): one read call with all its tries (read-retry.ts).
 * - life  = one signed transaction's life: its fee history read and at most MAX_SIMULATIONS
 *   simulations (compute-budget.ts), its blockhash read, its first send (one try per
 *   endpoint, in parallel: rpcTimeoutMs), the confirmation wait (until the blockhash expired,
 *   seen at the next height check, or the confirm timeout, whichever is first), and one last
 *   round of the wait loop (status, height and final status reads, a rebroadcast, a poll pause).
 * - attempt = life: startCrank aborts an attempt at that deadline (a transaction left without an
 *   outcome stays pending and the next attempt resolves it first), so batches that land one
 *   after the other cannot stretch an attempt beyond one transaction's life.
 * - cycle read = (STATE_READ_ROUNDS + HISTORY_READ_ROUNDS) sequential rounds of `read`.
 * - action = maxAttempts × attempt + (maxAttempts − 1) × (backoff ceiling + cycle read).
 * - cycle = cycle read + 3 actions.
 */

export interface CycleBoundSettings {
  maxAttempts: number;
  retryBackoffMs: number;
  rpcTimeoutMs: number;
  /**
   * How long a blockhash stays valid on the chains (151 blocks: about 60 s at mainnet's 400 ms
   * slots). Unknown to a server in general, so the default is the confirm timeout that caps it.
   */
  blockhashLifetimeMs?: number;
}

/** ack_deposit, ack_withdraw, cleanup_deposit. */
const ACTIONS_PER_CYCLE = 3;
/** Sequential rounds of read calls in a cycle's read. */
export const CYCLE_READ_ROUNDS = STATE_READ_ROUNDS + HISTORY_READ_ROUNDS;

export function transactionLifeMs(settings: CycleBoundSettings): number {
  const { rpcTimeoutMs, blockhashLifetimeMs } = settings;
  const read = readCallBudgetMs(rpcTimeoutMs);
  const { confirmTimeoutMs, rebroadcastIntervalMs, pollIntervalMs } = DEFAULT_SUBMIT_TIMING;
  const waitMs = blockhashLifetimeMs === undefined ? confirmTimeoutMs : Math.min(confirmTimeoutMs, blockhashLifetimeMs + rebroadcastIntervalMs);
  const lastRoundMs = 3 * read + rpcTimeoutMs + pollIntervalMs;
  const budgetMs = (1 + MAX_SIMULATIONS) * read;
  return budgetMs + read + rpcTimeoutMs + waitMs + lastRoundMs;
}

/** Where startCrank cuts an attempt: one transaction's life. */
export function attemptDeadlineMs(settings: CycleBoundSettings): number {
  return transactionLifeMs(settings);
}

export function cycleReadMs(settings: CycleBoundSettings): number {
  return CYCLE_READ_ROUNDS * readCallBudgetMs(settings.rpcTimeoutMs);
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
