import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Every metric the server exposes, declared once with its help text. The registry is owned by
 * the app (never prom-client's global one) so tests can build many apps in one process.
 */

// Confirmation on a Solana cluster takes from under a second to tens of seconds; an action can
// include retries with backoff on top.
const ACTION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120];
const RPC_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
// What users wait: from a poll interval plus a confirmation (seconds) to a stuck transfer (a day).
// Slots from a send to landing: 1 when the next leader takes it, a blockhash's life (150) at most.
const LANDING_SLOT_BUCKETS = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 150];
const WAIT_BUCKETS = [0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600];

export function createMetrics(registry: Registry = new Registry()) {
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  renameTotalGauges(registry);

  return {
    registry,

    crankCycles: new Counter({
      name: 'bridge_crank_cycles_total',
      help: 'Crank cycles run, by outcome (ok: every action succeeded; error: at least one action failed after all attempts, or the read failed).',
      labelNames: ['outcome'] as const,
      registers,
    }),
    crankCycleDuration: new Histogram({
      name: 'bridge_crank_cycle_duration_seconds',
      help: 'Wall time of a whole crank cycle, from the tracker reads to the last action.',
      buckets: ACTION_BUCKETS,
      registers,
    }),
    crankSubmissions: new Counter({
      name: 'bridge_crank_submissions_total',
      help: 'Crank action attempts by action and outcome (landed, failed, already_done).',
      labelNames: ['action', 'outcome'] as const,
      registers,
    }),
    crankActionDuration: new Histogram({
      name: 'bridge_crank_action_duration_seconds',
      help: 'Wall time of one crank action attempt (sign, send, confirm), by action.',
      labelNames: ['action'] as const,
      buckets: ACTION_BUCKETS,
      registers,
    }),
    crankRetries: new Counter({
      name: 'bridge_crank_retries_total',
      help: 'Crank action attempts that were retries of a failed attempt, by action.',
      labelNames: ['action'] as const,
      registers,
    }),
    crankTransactionsLanded: new Counter({
      name: 'bridge_crank_transactions_landed_total',
      help: 'Transactions signed by this authority that landed, by action.',
      labelNames: ['action'] as const,
      registers,
    }),
    crankPending: new Gauge({
      name: 'bridge_crank_pending_entries',
      help: 'Entries waiting for this authority at the latest read, by action (ack_deposit, ack_withdraw, cleanup_deposit).',
      labelNames: ['action'] as const,
      registers,
    }),
    crankLastRun: new Gauge({
      name: 'bridge_crank_last_run_timestamp_seconds',
      help: 'Unix time at which the latest crank cycle started (0 before the first).',
      registers,
    }),
    crankLastSuccess: new Gauge({
      name: 'bridge_crank_last_success_timestamp_seconds',
      help: 'Unix time of the latest successful crank action (0 before the first).',
      registers,
    }),
    crankEnabled: new Gauge({
      name: 'bridge_crank_enabled',
      help: '1 when runtime configuration is present and the crank loop runs, else 0.',
      registers,
    }),

    rpcRequests: new Counter({
      name: 'bridge_rpc_requests_total',
      help: 'JSON-RPC requests sent, by chain and method.',
      labelNames: ['chain', 'method'] as const,
      registers,
    }),
    rpcErrors: new Counter({
      name: 'bridge_rpc_errors_total',
      help: 'JSON-RPC requests that failed, by chain, method and kind (timeout, http, rpc, network, malformed).',
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
    transactionRebroadcasts: new Counter({
      name: 'bridge_transaction_rebroadcasts_total',
      help: 'Re-sends of the same signed transaction bytes while waiting for confirmation, by chain.',
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
      help: '1 while an RPC endpoint is in service (answered its latest request, circuit closed, not refusing us, slot advancing, not lagging, a node of its chain\'s cluster), 0 otherwise, by chain and endpoint (origin, never a path or query).',
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
      help: "The slot every read of the chain carries as minContextSlot: the highest slot two answers agreed on, or one a landing of the server's own rests on; absent until two answers agreed, and after a re-base.",
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
    healthStatus: new Gauge({
      name: 'bridge_health_status',
      help: '1 for the current /health status (ok, degraded, stalled), 0 for the others.',
      labelNames: ['status'] as const,
      registers,
    }),
    crankLastCycleFinished: new Gauge({
      name: 'bridge_crank_last_cycle_finished_timestamp_seconds',
      help: 'Unix time at which the latest crank cycle finished (0 before the first).',
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
      help: 'Entries of the authority key\'s transaction history ignored because the transaction does not verify (its id is not its fee payer\'s signature, or a signature does not match its message), by chain: a lying history node.',
      labelNames: ['chain'] as const,
      registers,
    }),
    computeUseIgnored: new Counter({
      name: 'bridge_compute_use_ignored_total',
      help: 'Compute-unit counts a node reported for this process\'s own landed transactions (getTransaction meta.computeUnitsConsumed) that the chain contradicts (0, above the limit asked, or at a limit already shown too small), by chain: ignored, the compute ceiling learns from the limit instead.',
      labelNames: ['chain'] as const,
      registers,
    }),
    signerEvidenceUnverified: new Counter({
      name: 'bridge_signer_evidence_unverified_total',
      help: 'Signs of a second signer that could not be proven, by chain: a nonce move whose transaction was not found and verified, or a history entry signed with the key that is not new (a replay). Neither halts nor stands the server down.',
      labelNames: ['chain'] as const,
      registers,
    }),
    nonceValueDisputes: new Counter({
      name: 'bridge_nonce_value_disputes_total',
      help: 'Signatures whose nonce value the RPC endpoints disagreed on, by chain: each claimed value is signed against in turn (at most one can land). A node serving nonce values that never existed shows here.',
      labelNames: ['chain'] as const,
      registers,
    }),
    signerTokenRenewals: new Counter({
      name: 'bridge_signer_token_renewals_total',
      help: "Renewals of the key service's token (Vault), by outcome: renewed, not_extended (its max TTL reached: its source must hold a new one before it expires), failed (a refused or unanswered lookup or renewal: signing goes on with it until it expires).",
      labelNames: ['outcome'] as const,
      registers,
    }),
    authorityMinBalance: new Gauge({
      name: 'bridge_authority_min_balance_lamports',
      help: 'Early-warning fee balance (BRIDGE_MIN_BALANCE_LAMPORTS), by chain: below it /health is degraded.',
      labelNames: ['chain'] as const,
      registers,
    }),
    crankDryRun: new Gauge({
      name: 'bridge_crank_dry_run',
      help: '1 when BRIDGE_DRY_RUN is on: cycles read and plan but submit nothing.',
      registers,
    }),
    crankDryRunPlanned: new Counter({
      name: 'bridge_crank_dry_run_planned_total',
      help: 'Entries a dry-run cycle would have submitted, by action.',
      labelNames: ['action'] as const,
      registers,
    }),
    transactionResigns: new Counter({
      name: 'bridge_transaction_resigns_total',
      help:
        'Transactions signed again, by chain and reason: expired (its blockhash expired before it landed; the attempt ends and the next one signs anew), ' +
        'repriced (nonce mode: an unlanded version signed again one escalation step higher against the same nonce value).',
      labelNames: ['chain', 'reason'] as const,
      registers,
    }),
    crankRole: new Gauge({
      name: 'bridge_crank_role',
      help: 'The crank\'s role, by role (active, standby): 1 for the current one. A standby reads and plans but submits nothing.',
      labelNames: ['role'] as const,
      registers,
    }),
    crankOtherSignerActive: new Gauge({
      name: 'bridge_crank_other_signer_active_seconds',
      help: 'While standing by: how long the other instance signing with this key has been seen signing (0 otherwise). Above bridge_crank_handoff_seconds it is a twin that stays.',
      registers,
    }),
    crankLease: new Gauge({
      name: 'bridge_crank_lease',
      help: 'The signing lease as this instance sees it, by status (off, unknown, held, released, waiting, taken, unusable): 1 for the current one (docs/crank.md "Role").',
      labelNames: ['status'] as const,
      registers,
    }),
    crankLeaseEvents: new Counter({
      name: 'bridge_crank_lease_events_total',
      help: 'Leasing steps by outcome: took, not_taken (another instance took it first), still_held (one read said lost, a second did not: a doubt), lost (another instance took it: a second signer), failed.',
      labelNames: ['outcome'] as const,
      registers,
    }),
    crankStandbyWaits: new Counter({
      name: 'bridge_crank_standby_window_restarts_total',
      help: 'Times a standby\'s quiet window started again for a reason other than another signer seen, by reason (history_incomplete: the key\'s history was left unchecked).',
      labelNames: ['reason'] as const,
      registers,
    }),
    crankHandoff: new Gauge({
      name: 'bridge_crank_handoff_seconds',
      help: 'BRIDGE_HANDOFF_SECS: how long a standby tolerates another active signer (0: no handoff).',
      registers,
    }),
    crankPollInterval: new Gauge({
      name: 'bridge_crank_poll_interval_seconds',
      help: 'BRIDGE_POLL_INTERVAL_SECS: the dashboard reads the ages of cycles against it.',
      registers,
    }),
    crankStandby: new Gauge({
      name: 'bridge_crank_standby_seconds',
      help: 'How long the crank has stood by in its current stretch, at its latest read (0 while active). Above bridge_crank_standby_window_seconds with no other signer seen, nobody signs: BridgeStandbyTooLong.',
      registers,
    }),
    crankStandbyWindow: new Gauge({
      name: 'bridge_crank_standby_window_seconds',
      help: 'The longest a standby waits when no other instance signs with its key: the quiet window, its random extra (at most one more window) and one poll interval.',
      registers,
    }),
    landingMode: new Gauge({
      name: 'bridge_chain_landing_mode',
      help: 'How the chain lands transactions at the latest read, by chain and mode (nonce, blockhash): 1 for the current one. From nonce to blockhash: BridgeNonceModeLost.',
      labelNames: ['chain', 'mode'] as const,
      registers,
    }),
    oldestPendingAgeSeconds: new Gauge({
      name: 'bridge_oldest_pending_age_seconds',
      help: 'Age of the oldest entry waiting for this authority, by action (0 when none waited at the latest read), computed when scraped: its age at the latest read (slots times the measured slot time) plus the time since, so it grows while reads fail or an action retries; absent until the slot time is measured (docs/crank.md "Waiting and latency").',
      labelNames: ['action'] as const,
      registers,
    }),
    oldestPendingAgeSlots: new Gauge({
      name: 'bridge_oldest_pending_age_slots',
      help: 'Age of the oldest entry waiting for this authority at the latest read, by action, in slots of its chain (ack_deposit, cleanup_deposit: source since deposit_slot; ack_withdraw: destination since finalized_slot).',
      labelNames: ['action'] as const,
      registers,
    }),
    voteLatency: new Histogram({
      name: 'bridge_vote_latency_seconds',
      help: 'Age of the entry when this authority\'s vote on it landed, by action (ack_deposit: since deposit_slot; ack_withdraw: since the destination finalized_slot).',
      labelNames: ['action'] as const,
      buckets: WAIT_BUCKETS,
      registers,
    }),
    transferLatency: new Histogram({
      name: 'bridge_transfer_latency_seconds',
      help: 'Transfers seen finishing on the source, from deposit_slot, by stage (ack_withdraw: the source entry finalized; cleanup: cleaned up); late by at most the time between two reads.',
      labelNames: ['stage'] as const,
      buckets: WAIT_BUCKETS,
      registers,
    }),
    slotDuration: new Gauge({
      name: 'bridge_chain_slot_duration_seconds',
      help: 'Slot time measured from the context slots of the crank\'s reads over the monotonic clock, by chain (absent until two reads differ in slot).',
      labelNames: ['chain'] as const,
      registers,
    }),
    transferWaitAlert: new Gauge({
      name: 'bridge_transfer_wait_alert_seconds',
      help: 'BRIDGE_TRANSFER_WAIT_ALERT_SECS: an entry waiting longer for this authority fires BridgeTransfersWaiting.',
      registers,
    }),
    priorityFee: new Gauge({
      name: 'bridge_priority_fee_microlamports',
      help: 'The priority fee (SetComputeUnitPrice, micro-lamports per CU) of the latest transaction signed, by chain.',
      labelNames: ['chain'] as const,
      registers,
    }),
    priorityFeeCap: new Gauge({
      name: 'bridge_priority_fee_max_microlamports',
      help: 'BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS: the most a transaction bids per CU, by chain.',
      labelNames: ['chain'] as const,
      registers,
    }),
    landingSlots: new Histogram({
      name: 'bridge_landing_slots',
      help: 'Slots from the first send of a transaction to the slot its landed version is in, by chain (docs/chain-client.md, "Landing measured").',
      labelNames: ['chain'] as const,
      buckets: LANDING_SLOT_BUCKETS,
      registers,
    }),
    landingOutcomes: new Counter({
      name: 'bridge_landing_outcomes_total',
      help: 'Sent transactions by what became of them, by chain and outcome (first_version: landed as first signed; later_version: a re-priced version landed; not_landed).',
      labelNames: ['chain', 'outcome'] as const,
      registers,
    }),
    landingVersions: new Histogram({
      name: 'bridge_landing_versions',
      help: 'Versions signed (against one nonce value) per landed transaction, by chain.',
      labelNames: ['chain'] as const,
      buckets: [1, 2, 3, 4, 6, 8],
      registers,
    }),
    sendPathSends: new Counter({
      name: 'bridge_send_path_sends_total',
      help: 'Signed transactions sent through each path (rpc: the read endpoints; else a BRIDGE_*_SEND_URLS origin), by chain, path and outcome (accepted, failed).',
      labelNames: ['chain', 'path', 'outcome'] as const,
      registers,
    }),
    sendPathLanded: new Counter({
      name: 'bridge_send_path_landed_total',
      help: 'Landed transactions whose landed version this path accepted (each path that carried it counts it), by chain and path.',
      labelNames: ['chain', 'path'] as const,
      registers,
    }),
    feesPaid: new Counter({
      name: 'bridge_fees_paid_lamports_total',
      help: 'Lamports the chain charged for transactions signed by this authority that landed (with an error or not), by chain and kind (base: per signature; priority: price x requested limit).',
      labelNames: ['chain', 'kind'] as const,
      registers,
    }),
    computeUnits: new Counter({
      name: 'bridge_compute_units_total',
      help: 'Compute units of landed transactions, by chain and kind (requested: SetComputeUnitLimit; used: what the simulation of the same instructions consumed).',
      labelNames: ['chain', 'kind'] as const,
      registers,
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * prom-client's default metrics include three gauges named `*_total`, a suffix Prometheus
 * reserves for counters (`promtool check metrics` reports each). Each is re-exposed as
 * `*_all` with the same value and help, and the original removed, so the exposition lints clean.
 */
const TOTAL_GAUGES = ['handles', 'requests', 'resources'] as const;

function renameTotalGauges(registry: Registry): void {
  for (const kind of TOTAL_GAUGES) {
    const name = `nodejs_active_${kind}_total`;
    const original = registry.getSingleMetric(name);
    if (original === undefined) continue;
    registry.removeSingleMetric(name);
    new Gauge({
      name: `nodejs_active_${kind}_all`,
      help: `Total number of active ${kind} (prom-client's ${name}, renamed: only counters end in _total).`,
      registers: [registry],
      async collect() {
        const { values } = await original.get();
        this.set(values[0]?.value ?? 0);
      },
    });
  }
}
