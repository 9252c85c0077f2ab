import type { ChainSide } from '../../domain.js';
import type { Metrics } from '../../metrics/metrics.js';
import { TRANSPORT_FAILURE_KINDS } from './rpc-fetch.js';

/**
 * The JSON-RPC methods ./chain-rpc.ts sends, as the labels of the per-method RPC metrics, and
 * those metrics zeroed at the start.
 */

/** The JSON-RPC methods this client sends (the slot probes' getSlot included): its metric labels. */
const RPC_METHODS = [
  'getAccountInfo',
  'getMultipleAccounts',
  'getBalance',
  'getLatestBlockhash',
  'getEpochInfo',
  'getSignatureStatuses',
  'sendTransaction',
  'simulateTransaction',
  'getRecentPrioritizationFees',
  'getSignaturesForAddress',
  'getTransaction',
  'getSlot',
] as const;

export type RpcMethod = (typeof RPC_METHODS)[number];

/**
 * Every per-method counter at 0 from the start, so that a dashboard panel or an increase() sees
 * the first request, retry or failure rather than a series that appears with it.
 */
export function zeroMethodCounters(chain: ChainSide, metrics: Metrics): void {
  for (const method of RPC_METHODS) {
    metrics.rpcRequests.inc({ chain, method }, 0);
    metrics.rpcRetries.inc({ chain, method }, 0);
    for (const kind of TRANSPORT_FAILURE_KINDS) metrics.rpcErrors.inc({ chain, method, kind }, 0);
  }
}
