import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * How transactions land: the landing mode, disputed nonce values, the signer's token renewals,
 * the priority fee bid, re-signs and rebroadcasts, the send paths, the slots to landing, and
 * what landing cost.
 * Declared once here, with their help text; registered by createMetrics (metrics.ts).
 */

// Slots from a send to landing: 1 when the next leader takes it, a blockhash's life (150) at most.
const LANDING_SLOT_BUCKETS = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 150];

export function landingMetrics(registers: Registry[]) {
  return {
    transactionRebroadcasts: new Counter({
      name: 'bridge_transaction_rebroadcasts_total',
      help: 'Re-sends of the same signed transaction bytes while waiting for confirmation, by chain.',
      labelNames: ['chain'] as const,
      registers,
    }),
    computeUseIgnored: new Counter({
      name: 'bridge_compute_use_ignored_total',
      help: "Compute-unit counts a node reported for this process's own landed transactions (getTransaction meta.computeUnitsConsumed) that the chain contradicts (0, above the limit asked, or at a limit already shown too small), by chain: ignored, the compute ceiling learns from the limit instead.",
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
    transactionResigns: new Counter({
      name: 'bridge_transaction_resigns_total',
      help:
        'Transactions signed again, by chain and reason: expired (its blockhash expired before it landed; the attempt ends and the next one signs anew), ' +
        'repriced (nonce mode: an unlanded version signed again one escalation step higher against the same nonce value).',
      labelNames: ['chain', 'reason'] as const,
      registers,
    }),
    landingMode: new Gauge({
      name: 'bridge_chain_landing_mode',
      help: 'How the chain lands transactions at the latest read, by chain and mode (nonce, blockhash): 1 for the current one. From nonce to blockhash: BridgeNonceModeLost.',
      labelNames: ['chain', 'mode'] as const,
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
