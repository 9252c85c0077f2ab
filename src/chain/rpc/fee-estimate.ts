import type { PublicKey } from '@solana/web3.js';
import type { ChainSide } from '../../domain.js';
import type { Logger } from '../../log/logger.js';
import type { Metrics } from '../../metrics/metrics.js';
import { jsonRpcCall } from './rpc-failure.js';
import { createRpcFetch, type RpcFetch } from './rpc-fetch.js';

/**
 * A provider's priority fee estimate beside getRecentPrioritizationFees
 * (BRIDGE_SOURCE_FEE_ESTIMATE_URL, BRIDGE_TARGET_FEE_ESTIMATE_URL; docs/chain-client.md, "Compute
 * budget and priority fees"): Helius's `getPriorityFeeEstimate` over the accounts a transaction
 * writes at the `High` level (its 75th percentile, as the bid's own), answered as
 * `{priorityFeeEstimate}` in micro-lamports per CU. One request per bid through the metered
 * fetch (BRIDGE_RPC_TIMEOUT_MS, the response bound), no retry: a failed or malformed answer is
 * no estimate (a debug line), never a failed bid. What the bidder does with it is bounded there
 * (../client/budget/priority-fee.ts): never above the cap, never above what the chain shows landed.
 */

const PRIORITY_LEVEL = 'High';

export interface FeeEstimateOptions {
  chain: ChainSide;
  url: string;
  timeoutMs: number;
  metrics: Metrics;
  logger: Logger;
  fetch?: RpcFetch;
}

export class FeeEstimates {
  readonly #rpcFetch: RpcFetch;

  constructor(private readonly options: FeeEstimateOptions) {
    const { chain, timeoutMs, metrics } = options;
    this.#rpcFetch = createRpcFetch({ chain, timeoutMs, metrics, ...(options.fetch === undefined ? {} : { fetch: options.fetch }) });
  }

  /** The provider's estimate for a transaction writing `accounts`; undefined when it has none to give. */
  async estimate(accounts: readonly PublicKey[], signal: AbortSignal): Promise<number | undefined> {
    const params = [{ accountKeys: accounts.map((account) => account.toBase58()), options: { priorityLevel: PRIORITY_LEVEL } }];
    try {
      const result = await jsonRpcCall(this.#rpcFetch, this.options.url, 'getPriorityFeeEstimate', params, signal);
      const value = (result as { priorityFeeEstimate?: unknown } | null)?.priorityFeeEstimate;
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
        throw new Error(`no priorityFeeEstimate number in ${JSON.stringify(result)?.slice(0, 100)}`);
      return Math.min(Math.ceil(value), Number.MAX_SAFE_INTEGER);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      this.options.logger.debug({ err }, 'the priority fee estimate failed; the bid goes on from the fee history');
      return undefined;
    }
  }
}
