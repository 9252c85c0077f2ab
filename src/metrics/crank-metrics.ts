import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * The crank's metrics: its cycles and actions, its role and lease, what /health reports, and
 * how long transfers and votes wait. Declared once here, with their help text; registered on
 * the app's registry by createMetrics (metrics.ts).
 */

// Confirmation on a Solana cluster takes from under a second to tens of seconds; an action can
// include retries with backoff on top.
const ACTION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120];
// What users wait: from a poll interval plus a confirmation (seconds) to a stuck transfer (a day).
const WAIT_BUCKETS = [0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600];

/** A timestamp gauge that has no series until it is first set (prom-client starts an unlabelled gauge at 0). */
function absentUntilSet(gauge: Gauge): Gauge {
  gauge.remove();
  return gauge;
}

export function crankMetrics(registers: Registry[]) {
  return {
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
    crankLastRun: absentUntilSet(
      new Gauge({
        name: 'bridge_crank_last_run_timestamp_seconds',
        help: 'Unix time at which the latest crank cycle started (absent before the first: a 0 would read as an age of decades).',
        registers,
      }),
    ),
    crankLastSuccess: absentUntilSet(
      new Gauge({
        name: 'bridge_crank_last_success_timestamp_seconds',
        help: 'Unix time of the latest successful crank action (absent before the first: a 0 would read as an age of decades).',
        registers,
      }),
    ),
    crankEnabled: new Gauge({
      name: 'bridge_crank_enabled',
      help: '1 when runtime configuration is present and the crank loop runs, else 0.',
      registers,
    }),
    healthStatus: new Gauge({
      name: 'bridge_health_status',
      help: '1 for the current /health status (ok, degraded, stalled), 0 for the others.',
      labelNames: ['status'] as const,
      registers,
    }),
    crankLastCycleFinished: absentUntilSet(
      new Gauge({
        name: 'bridge_crank_last_cycle_finished_timestamp_seconds',
        help: 'Unix time at which the latest crank cycle finished (absent before the first: a 0 would read as an age of decades).',
        registers,
      }),
    ),
    crankUnlandedSince: absentUntilSet(
      new Gauge({
        name: 'bridge_crank_unlanded_since_timestamp_seconds',
        help: 'Unix time since which work has waited for this authority with none of its transactions landing (the first read that found work after the latest landing, or that landing). Absent while nothing waits, while standing by, in a dry run and before the first read. BridgeVotesNotLanding pages on its age.',
        registers,
      }),
    ),
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
    crankRole: new Gauge({
      name: 'bridge_crank_role',
      help: "The crank's role, by role (active, standby): 1 for the current one. A standby reads and plans but submits nothing.",
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
      help: 'Leasing steps by outcome: took, not_taken (another instance took it first), doubt (a read said lost and nothing proves it: the holder keeps signing), lost (proven: another instance took it, a second signer), failed.',
      labelNames: ['outcome'] as const,
      registers,
    }),
    crankStandbyWaits: new Counter({
      name: 'bridge_crank_standby_window_restarts_total',
      help: "Times a standby's quiet window started again for a reason other than another signer seen, by reason (history_incomplete: the key's history was left unchecked).",
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
      help: 'How long the crank has stood by in its current stretch, at its latest read (0 while active; waiting on a lease another instance holds, only while work waits). Above bridge_crank_standby_window_seconds with no other signer seen, nobody signs: BridgeStandbyTooLong.',
      registers,
    }),
    crankStandbyWindow: new Gauge({
      name: 'bridge_crank_standby_window_seconds',
      help: 'The longest a standby waits when no other instance signs with its key: the quiet window, its random extra (at most one more window) and one poll interval.',
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
      help: "Age of the entry when this authority's vote on it landed, by action (ack_deposit: since deposit_slot; ack_withdraw: since the destination finalized_slot).",
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
    transferWaitAlert: new Gauge({
      name: 'bridge_transfer_wait_alert_seconds',
      help: 'BRIDGE_TRANSFER_WAIT_ALERT_SECS: an entry waiting longer for this authority fires BridgeTransfersWaiting.',
      registers,
    }),
  };
}
