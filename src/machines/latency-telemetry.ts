import type { ChainSide, CrankAction } from '../domain.js';
import type { Metrics } from '../metrics/metrics.js';
import type { CrankEmitted } from './crank-types.js';
import { AGE_CHAIN, stagesFinished, type DepositProgress, type VoteAction, type WaitingRead } from './planning/waiting.js';
import { measuredSlotMs, withSlotSample, type SlotSample } from './slot-clock.js';

/**
 * How long users wait, as metrics (docs/crank.md "Waiting and latency"): the oldest waiting
 * entry per action, the age at which this authority's votes landed and the transfers seen
 * finishing, all from the slots the crank's reads already carry, turned into seconds with each
 * chain's measured slot time (slot-clock.ts). It keeps what the next event needs: the slot
 * samples, the ages of the votes planned at the latest read, and the source entries that read
 * held; observations made before a chain's slot time is measured wait for it (at most
 * MAX_UNMEASURED, the oldest dropped beyond).
 *
 * The oldest waiting entry's age in seconds is computed when /metrics is scraped, from the
 * latest read and the monotonic clock: its age at the read plus the time since. A crank whose
 * reads fail (the node is down) or whose action retries for minutes (every send fails) makes no
 * new read, and the age must keep growing then, or BridgeTransfersWaiting could not fire in the
 * incidents it exists for (after sui-bridge's watchdog: a stalled loop must not freeze its gauges).
 */

const MAX_UNMEASURED = 1024;

interface Observation {
  chain: ChainSide;
  ageSlots: number;
  /** Milliseconds after the read, added to the age in slots. */
  afterReadMs: number;
  record(seconds: number): void;
}

export interface LatencyTelemetry {
  record(emitted: CrankEmitted, nowMs: number): void;
}

const ACTIONS: readonly CrankAction[] = ['ack_deposit', 'ack_withdraw', 'cleanup_deposit'];

function isVoteAction(action: CrankAction): action is VoteAction {
  return action !== 'cleanup_deposit';
}

/** `clock`: monotonic ms, the clock of the reads' `readAtMs` (performance.now()). */
export function createLatencyTelemetry(metrics: Metrics, clock: () => number = () => performance.now()): LatencyTelemetry {
  const samples: Record<ChainSide, SlotSample[]> = { source: [], target: [] };
  let latest: { waiting: WaitingRead; readAtMs: number } | null = null;
  let deposits: readonly DepositProgress[] = [];
  let unmeasured: Observation[] = [];

  function slotMs(chain: ChainSide): number | null {
    return measuredSlotMs(samples[chain]);
  }

  function observe(observation: Observation): void {
    const ms = slotMs(observation.chain);
    if (ms !== null) observation.record((observation.ageSlots * ms + observation.afterReadMs) / 1000);
    else unmeasured = [...unmeasured, observation].slice(-MAX_UNMEASURED);
  }

  function planned(waiting: WaitingRead, readAtMs: number): void {
    for (const chain of ['source', 'target'] as const) {
      samples[chain] = withSlotSample(samples[chain], { slot: waiting.slots[chain], atMs: readAtMs });
      const ms = slotMs(chain);
      if (ms !== null) metrics.slotDuration.set({ chain }, ms / 1000);
    }
    const waitingBefore = unmeasured;
    unmeasured = [];
    for (const observation of waitingBefore) observe(observation);
    for (const { stage, ageSlots } of stagesFinished(deposits, waiting)) {
      observe({ chain: 'source', ageSlots, afterReadMs: 0, record: (seconds) => metrics.transferLatency.observe({ stage }, seconds) });
    }
    deposits = waiting.deposits;
    latest = { waiting, readAtMs };
  }

  /** At scrape time: slots at the latest read; seconds at the read plus the monotonic time since. */
  function publishOldest(): void {
    if (latest === null) return;
    const afterReadMs = Math.max(0, clock() - latest.readAtMs);
    for (const action of ACTIONS) {
      const entry = latest.waiting.oldest[action];
      metrics.oldestPendingAgeSlots.set({ action }, entry?.ageSlots ?? 0);
      const ms = slotMs(AGE_CHAIN[action]);
      if (ms !== null) metrics.oldestPendingAgeSeconds.set({ action }, entry === null ? 0 : (entry.ageSlots * ms + afterReadMs) / 1000);
    }
  }

  // prom-client calls a metric's `collect` right before reading it (as publishHealthStatusAtScrape does).
  Object.assign(metrics.oldestPendingAgeSeconds, { collect: publishOldest });
  Object.assign(metrics.oldestPendingAgeSlots, { collect: publishOldest });

  /** Votes of a landed attempt: each entry's age at the read plus the time since the read. */
  function votesLanded(action: VoteAction, indices: readonly number[], nowMs: number): void {
    if (latest === null) return;
    const ages = new Map(latest.waiting.votes[action].map((vote) => [vote.index, vote.ageSlots]));
    const afterReadMs = Math.max(0, nowMs - latest.readAtMs);
    for (const index of indices) {
      const ageSlots = ages.get(index);
      if (ageSlots === undefined) continue;
      observe({ chain: AGE_CHAIN[action], ageSlots, afterReadMs, record: (seconds) => metrics.voteLatency.observe({ action }, seconds) });
    }
  }

  return {
    record(emitted, nowMs) {
      if (emitted.type === 'planned') planned(emitted.waiting, emitted.readAtMs);
      if (emitted.type === 'attempt' && emitted.outcome === 'landed' && isVoteAction(emitted.action)) {
        votesLanded(emitted.action, emitted.indices, nowMs);
      }
    },
  };
}
