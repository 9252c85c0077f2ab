import type { ChainSide } from '../../../../domain.js';
import type { Metrics } from '../../../../metrics/metrics.js';
import type { LandingSummary } from '../../../port/bridge-chains.js';

/**
 * How one chain's transactions land, measured in slots (docs/chain-client.md, "Landing
 * measured"): for each transaction sent, the slots from its first send to the slot its landed
 * version is in, whether the first version signed is the one that landed, and how many
 * versions were signed. The metrics keep the whole history; the last LANDING_WINDOW_MS are kept
 * here (at most MAX_WINDOW_EVENTS) for /health, the crank page, the bid's starting step and the
 * nonce-mode re-sign pace.
 */

export const LANDING_WINDOW_MS = 10 * 60_000;

/** Events kept for the window: ten minutes of a transaction per 150 ms, far above what one crank sends. */
const MAX_WINDOW_EVENTS = 4_096;

/** Outcomes a window needs before its rate says anything (one miss in a few is not a trend). */
const LANDING_RATE_MIN_OUTCOMES = 10;

/**
 * Nonce mode re-signs a version one step higher after it waited this many slots unlanded:
 * the window's p90 slots-to-land plus RESIGN_MARGIN_SLOTS, within [MIN_RESIGN_SLOTS,
 * MAX_RESIGN_SLOTS]; DEFAULT_RESIGN_SLOTS while nothing landed in the window (a cluster that
 * is not congested lands in 1 or 2). At 400 ms slots, from a surge the fee history hides, the
 * first step (a quarter of the cap) is bid about 1.2 s after the first send (3 slots and a
 * status poll) and the cap about 4 s after; with a measured p90 of 2 a version waits 1.6 s.
 */
const MIN_RESIGN_SLOTS = 2;
const DEFAULT_RESIGN_SLOTS = 3;
const MAX_RESIGN_SLOTS = 10;
const RESIGN_MARGIN_SLOTS = 2;

export interface LandingEvent {
  atMs: number;
  /** Slots from first send to landed; undefined when it never landed. */
  slots: number | undefined;
  firstVersion: boolean;
  versions: number;
  /** Never landed and no node or send-only path accepted any version: a failed send, which says nothing of the price. */
  refused?: boolean;
}

export class LandingRecord {
  readonly #events: LandingEvent[] = [];

  constructor(
    private readonly chain: ChainSide,
    private readonly metrics: Metrics,
    private readonly now: () => number = Date.now,
  ) {
    for (const outcome of ['first_version', 'later_version', 'not_landed']) metrics.landingOutcomes.inc({ chain, outcome }, 0);
  }

  /** A transaction landed `slots` after its first send, as version `versionIndex` (0-based) of `versions`. */
  landed(slots: number, versionIndex: number, versions: number): void {
    const { chain, metrics } = this;
    const firstVersion = versionIndex === 0;
    metrics.landingSlots.observe({ chain }, slots);
    metrics.landingVersions.observe({ chain }, versions);
    metrics.landingOutcomes.inc({ chain, outcome: firstVersion ? 'first_version' : 'later_version' });
    this.#push({ atMs: this.now(), slots, firstVersion, versions });
  }

  /** A transaction that was sent and can no longer land; `accepted`: some node or send-only path took a version of it. */
  notLanded(versions: number, accepted: boolean): void {
    this.metrics.landingOutcomes.inc({ chain: this.chain, outcome: 'not_landed' });
    this.#push({ atMs: this.now(), slots: undefined, firstVersion: false, versions, ...(accepted ? {} : { refused: true }) });
  }

  summary(): LandingSummary {
    return summarize(this.#recent());
  }

  /**
   * The first-version landing rate over the window, of the transactions some node or path
   * accepted (a send refused everywhere is a failed send, never a reason to bid higher);
   * undefined with fewer than LANDING_RATE_MIN_OUTCOMES outcomes.
   */
  rate(): number | undefined {
    const recent = this.#recent().filter((event) => event.refused !== true);
    if (recent.length < LANDING_RATE_MIN_OUTCOMES) return undefined;
    return recent.filter((event) => event.firstVersion).length / recent.length;
  }

  /** Slots a nonce-mode version waits unlanded before it is signed one step higher. */
  resignSlots(): number {
    return resignSlotsFrom(this.#recent());
  }

  #push(event: LandingEvent): void {
    this.#events.push(event);
    if (this.#events.length > MAX_WINDOW_EVENTS) this.#events.shift();
  }

  #recent(): LandingEvent[] {
    const since = this.now() - LANDING_WINDOW_MS;
    while (this.#events.length > 0 && this.#events[0]!.atMs < since) this.#events.shift();
    return this.#events;
  }
}

export function summarize(events: readonly LandingEvent[]): LandingSummary {
  const landed = events.filter((event) => event.slots !== undefined);
  const slots = landed.map((event) => event.slots!).sort((a, b) => a - b);
  return {
    transactions: events.length,
    landed: landed.length,
    first_version_rate: events.length === 0 ? null : round(events.filter((event) => event.firstVersion).length / events.length),
    slots_p50: nearestRank(slots, 50) ?? null,
    slots_p90: nearestRank(slots, 90) ?? null,
    versions_per_landed: landed.length === 0 ? null : round(landed.reduce((sum, event) => sum + event.versions, 0) / landed.length),
  };
}

/** The re-sign pace from the window's first-version landings (what a bid at the going price takes). */
export function resignSlotsFrom(events: readonly LandingEvent[]): number {
  const slots = events
    .filter((event) => event.firstVersion && event.slots !== undefined)
    .map((event) => event.slots!)
    .sort((a, b) => a - b);
  const p90 = nearestRank(slots, 90);
  if (p90 === undefined) return DEFAULT_RESIGN_SLOTS;
  return Math.min(MAX_RESIGN_SLOTS, Math.max(MIN_RESIGN_SLOTS, p90 + RESIGN_MARGIN_SLOTS));
}

function nearestRank(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
