import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * What reading the chains costs and shows: RPC calls and their endpoints, the slot view, the
 * bytes read, the authority's balance, and the answers that did not verify (history, signer
 * evidence). Declared once here, with their help text; registered by createMetrics (metrics.ts).
 */

const RPC_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function chainReadMetrics(registers: Registry[]) {
  return {
    rpcRequests: new Counter({
      name: 'bridge_rpc_requests_total',
      help: 'JSON-RPC requests sent, by chain and method.',
      labelNames: ['chain', 'method'] as const,
      registers,
    }),
    rpcErrors: new Counter({
      name: 'bridge_rpc_errors_total',
      help: 'JSON-RPC requests that failed, by chain, method and kind (timeout, http, rpc, network, malformed, tls, too_large).',
      labelNames: ['chain', 'method', 'kind'] as const,
      registers,
    }),
    rpcDuration: new Histogram({
      name: 'bridge_rpc_request_duration_seconds',
      help: 'JSON-RPC request latency, by chain and method.',
      labelNames: ['chain', 'method'] as const,
      buckets: RPC_BUCKETS,
      registers,
    }),
    accountBytesRead: new Counter({
      name: 'bridge_chain_account_bytes_read_total',
      help: 'Account data bytes read from tracker accounts, by chain.',
      labelNames: ['chain'] as const,
      registers,
    }),
    lastCycleAccountBytes: new Gauge({
      name: 'bridge_chain_last_read_account_bytes',
      help: 'Account data bytes read by the latest tracker read, by chain; grows with pending work, not tracker size.',
      labelNames: ['chain'] as const,
      registers,
    }),
    authorityBalance: new Gauge({
      name: 'bridge_authority_balance_lamports',
      help: 'Lamports held by the authority (fee payer) on each chain at the latest read.',
      labelNames: ['chain'] as const,
      registers,
    }),
    rpcRetries: new Counter({
      name: 'bridge_rpc_retries_total',
      help: 'Idempotent JSON-RPC reads sent again after a transient failure (429, 5xx, timeout, network, node behind), by chain and method.',
      labelNames: ['chain', 'method'] as const,
      registers,
    }),
    rpcEndpointUp: new Gauge({
      name: 'bridge_rpc_endpoint_up',
      help: "1 while an RPC endpoint is in service (answered its latest request, circuit closed, not refusing us, slot advancing, not lagging, a node of its chain's cluster), 0 otherwise, by chain and endpoint (origin, never a path or query).",
      labelNames: ['chain', 'endpoint'] as const,
      registers,
    }),
    rpcHistoryAvailable: new Gauge({
      name: 'bridge_rpc_history_available',
      help: '1 while some RPC endpoint of the chain keeps transaction history (second-signer detection works), 0 when every one answers -32011; absent until a history read said.',
      labelNames: ['chain'] as const,
      registers,
    }),
    rpcEndpointSlot: new Gauge({
      name: 'bridge_rpc_endpoint_slot',
      help: 'Latest slot an RPC endpoint reported that the server accepted (its mark; a claim beyond what the chain can have made is not), by chain and endpoint.',
      labelNames: ['chain', 'endpoint'] as const,
      registers,
    }),
    rpcSlotFloor: new Gauge({
      name: 'bridge_rpc_slot_floor',
      help: "The slot every confirmed read of the chain carries as minContextSlot (finalized reads carry a floor of their own): the highest slot two confirmed answers agreed on, or one a landing of the server's own seen confirmed rests on; absent until two answers agreed, and after a re-base.",
      labelNames: ['chain'] as const,
      registers,
    }),
    rpcSlotOutliers: new Counter({
      name: 'bridge_rpc_slot_outliers_total',
      help: 'Slots an RPC endpoint claimed that the server ignored: ahead (beyond what the chain can have made since the corroborated slot) or behind (an answer older than the floor its read carried), by chain, endpoint and direction.',
      labelNames: ['chain', 'endpoint', 'direction'] as const,
      registers,
    }),
    rpcSlotFloorRebases: new Counter({
      name: 'bridge_rpc_slot_floor_rebases_total',
      help: 'Times every RPC endpoint of the chain refused the slot floor for several reads in a row and the server dropped it and its slot marks, by chain.',
      labelNames: ['chain'] as const,
      registers,
    }),
    rpcEndpointClusterMismatches: new Counter({
      name: 'bridge_rpc_endpoint_cluster_mismatches_total',
      help: "getGenesisHash answers of an RPC endpoint naming another cluster than its chain's (the primary's answer, or the majority's while the primary has none): that endpoint serves nothing, by chain and endpoint.",
      labelNames: ['chain', 'endpoint'] as const,
      registers,
    }),
    rpcEndpointErrors: new Counter({
      name: 'bridge_rpc_endpoint_errors_total',
      help: 'Failed JSON-RPC requests by chain, endpoint and kind (timeout, http, rpc, network, malformed, too_large, lagging, stalled).',
      labelNames: ['chain', 'endpoint', 'kind'] as const,
      registers,
    }),
    foreignSignatures: new Counter({
      name: 'bridge_foreign_signatures_total',
      help: 'Transactions signed by this authority key that this process did not sign (a second signer), by chain.',
      labelNames: ['chain'] as const,
      registers,
    }),
    historyUnverified: new Counter({
      name: 'bridge_history_unverified_total',
      help: "Entries of the authority key's transaction history ignored because the transaction does not verify (its id is not its fee payer's signature, or a signature does not match its message), by chain: a lying history node.",
      labelNames: ['chain'] as const,
      registers,
    }),
    signerEvidenceUnverified: new Counter({
      name: 'bridge_signer_evidence_unverified_total',
      help: 'Signs of a second signer that could not be proven, by chain: a nonce move whose transaction was not found and verified, or a history entry signed with the key that is not new (a replay). Neither halts nor stands the server down.',
      labelNames: ['chain'] as const,
      registers,
    }),
    authorityMinBalance: new Gauge({
      name: 'bridge_authority_min_balance_lamports',
      help: 'Early-warning fee balance (BRIDGE_MIN_BALANCE_LAMPORTS), by chain: below it /health is degraded.',
      labelNames: ['chain'] as const,
      registers,
    }),
    slotDuration: new Gauge({
      name: 'bridge_chain_slot_duration_seconds',
      help: "Slot time measured from the context slots of the crank's reads over the monotonic clock, by chain (absent until two reads differ in slot).",
      labelNames: ['chain'] as const,
      registers,
    }),
  };
}
