import { HISTORY_READ_ROUNDS } from './read/authority-history.js';
import { MAX_SIMULATIONS } from './budget/compute-budget.js';
import { STATE_READ_ROUNDS } from './read/read-state.js';
import { DEFAULT_SUBMIT_TIMING } from './submit/transaction-sender.js';
import type { ChainBounds } from '../port/bridge-chains.js';
import { readCallBudgetMs } from '../rpc/read-retry.js';

/**
 * How long the chain layer's calls behind BridgeChains can take at most, for the crank's bounds
 * (docs/crank.md, "Bounds"): the client's side of the port's ChainBounds. The wiring
 * (src/assemble-crank.ts) hands the crank these numbers as values; the crank never imports
 * this file, nor the client and RPC constants they are made of, which are imported here from
 * where each is enforced.
 *
 * - read = readCallBudgetMs(rpcTimeoutMs): one read call with all its tries (read-retry.ts).
 * - cycle read = (STATE_READ_ROUNDS + HISTORY_READ_ROUNDS) sequential rounds of `read`: readState
 *   then readAuthority.
 * - life = one signed transaction's life: its fee history read and at most MAX_SIMULATIONS
 *   simulations (compute-budget.ts), its blockhash read, its first send (one try per endpoint,
 *   in parallel: rpcTimeoutMs), the confirmation wait (until the blockhash expired, seen at the
 *   next height check, or the confirm timeout, whichever is first), and one last round of the
 *   wait loop (status, height and final status reads, a rebroadcast, a poll pause).
 */

export interface ChainBoundSettings {
  rpcTimeoutMs: number;
  /**
   * How long a blockhash stays valid on the chains (151 blocks: about 60 s at mainnet's 400 ms
   * slots). Unknown to a server in general, so the default is the confirm timeout that caps it.
   */
  blockhashLifetimeMs?: number;
}

/** The bounds the crank is started with (src/machines/delays.ts makes its own of them). */
export function chainBounds(settings: ChainBoundSettings): ChainBounds {
  return { cycleReadMs: cycleReadMs(settings), transactionLifeMs: transactionLifeMs(settings) };
}

/** Sequential rounds of read calls in one readState and one readAuthority. */
export const CYCLE_READ_ROUNDS = STATE_READ_ROUNDS + HISTORY_READ_ROUNDS;

export function cycleReadMs(settings: Pick<ChainBoundSettings, 'rpcTimeoutMs'>): number {
  return CYCLE_READ_ROUNDS * readCallBudgetMs(settings.rpcTimeoutMs);
}

export function transactionLifeMs(settings: ChainBoundSettings): number {
  const { rpcTimeoutMs, blockhashLifetimeMs } = settings;
  const read = readCallBudgetMs(rpcTimeoutMs);
  const { confirmTimeoutMs, rebroadcastIntervalMs, pollIntervalMs } = DEFAULT_SUBMIT_TIMING;
  const waitMs = blockhashLifetimeMs === undefined ? confirmTimeoutMs : Math.min(confirmTimeoutMs, blockhashLifetimeMs + rebroadcastIntervalMs);
  const lastRoundMs = 3 * read + rpcTimeoutMs + pollIntervalMs;
  const budgetMs = (1 + MAX_SIMULATIONS) * read;
  return budgetMs + read + rpcTimeoutMs + waitMs + lastRoundMs;
}
