import { Connection } from '@solana/web3.js';
import type { IPolicy } from 'cockatiel';
import type { RpcFailureKind } from '../../errors.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { ChainSide } from '../../domain.js';
import { createRpcFetch, TRANSPORT_FAILURE_KINDS, type RpcFetch } from './rpc-fetch.js';

/**
 * One RPC endpoint of a chain: its label, its metered fetch (./rpc-fetch.ts), the web3.js
 * Connection over that fetch, and its circuit breaker (./endpoint-pool.ts decides which
 * endpoint serves).
 */
export interface Endpoint {
  readonly index: number;
  /** Origin (and #k when two share one): for metrics, logs and messages. Never the path or query. */
  readonly label: string;
  readonly url: string;
  readonly rpcFetch: RpcFetch;
  readonly connection: Connection;
  readonly breaker: IPolicy;
}

export interface EndpointSettings {
  chain: ChainSide;
  label: string;
  timeoutMs: number;
  metrics: Metrics;
  fetch?: RpcFetch;
}

export function openEndpoint(index: number, url: string, { chain, label, timeoutMs, metrics, fetch }: EndpointSettings, breaker: IPolicy): Endpoint {
  // At 0 from the start for each kind, so that a panel or an increase() sees the first failure.
  for (const kind of TRANSPORT_FAILURE_KINDS) metrics.rpcEndpointErrors.inc({ chain, endpoint: label, kind }, 0);
  metrics.rpcEndpointClusterMismatches.inc({ chain, endpoint: label }, 0);
  const onFailure = (kind: RpcFailureKind) => metrics.rpcEndpointErrors.inc({ chain, endpoint: label, kind });
  const rpcFetch = createRpcFetch({ chain, timeoutMs, metrics, onFailure, ...(fetch === undefined ? {} : { fetch }) });
  const connection = new Connection(url, {
    commitment: 'confirmed',
    fetch: rpcFetch,
    disableRetryOnRateLimit: true,
    // Keep web3.js from building an agentkeepalive agent that globalThis.fetch would ignore.
    httpAgent: false,
  });
  return { index, label, url, rpcFetch, connection, breaker };
}
