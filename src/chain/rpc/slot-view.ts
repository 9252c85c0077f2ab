import { chainName, type ChainSide } from '../../domain.js';
import type { Logger } from '../../log/logger.js';
import type { Metrics } from '../../metrics/metrics.js';
import {
  corroboratedSlot,
  corroboratingClaim,
  isVouched,
  nextRun,
  RATE_WINDOW_MS,
  slotCeiling,
  VOUCH_LAGS,
  slotRateBound,
  type EndpointClaims,
  type SlotMark,
} from './slot-marks.js';

/**
 * The slots one chain's endpoints claim, judged (./slot-marks.ts), and the floor every read of
 * the chain carries as minContextSlot: the highest corroborated slot, raised by slots a decision
 * rests on (a landing of the server's own transaction). When every endpoint refuses the floor
 * for FLOOR_REFUSALS_BEFORE_REBASE reads in a row, the floor and every mark are dropped with a
 * warn line, and the next answers build them again.
 */

/** Consecutive reads refused at the floor (-32016 from every endpoint tried, or answers below it) before the floor is dropped. */
export const FLOOR_REFUSALS_BEFORE_REBASE = 3;

/** How often a corroborated slot that does not move is sampled. */
const SAMPLE_EVERY_MS = 500;

export interface SlotViewOptions {
  chain: ChainSide;
  labels: readonly string[];
  maxSlotLag: number;
  metrics: Metrics;
  logger?: Logger;
  now: () => number;
}

export class SlotView {
  readonly #claims: EndpointClaims[];
  /** Samples of the corroborated slot over the last RATE_WINDOW_MS, oldest first: how fast the chain makes slots. */
  #samples: SlotMark[] = [];
  #floor: number | undefined;
  #refusedReads = 0;

  constructor(private readonly options: SlotViewOptions) {
    this.#claims = options.labels.map(() => emptyClaims());
    for (const endpoint of options.labels) {
      for (const direction of ['ahead', 'behind'] as const) options.metrics.rpcSlotOutliers.inc({ chain: options.chain, endpoint, direction }, 0);
    }
    options.metrics.rpcSlotFloorRebases.inc({ chain: options.chain }, 0);
  }

  /**
   * A slot endpoint `index` claimed (a context slot, a getSlot answer). Within the ceiling (or
   * corroborated by a second answer beyond it) it becomes the endpoint's mark: true. Beyond it, it
   * is counted as an outlier and ignored: false.
   */
  claim(index: number, slot: number): boolean {
    const now = this.options.now();
    const { maxSlotLag } = this.options;
    const rate = this.#rate();
    const claims = this.#claims[index]!;
    claims.run = nextRun(claims.run, { slot, at: now }, rate, maxSlotLag);
    if (slot > slotCeiling(corroboratedSlot(this.#claims, now), rate, maxSlotLag, now) && !this.#vouched(index, slot, now)) {
      const backing = corroboratingClaim(this.#claims, index, slot, rate!, maxSlotLag, now);
      if (backing === undefined) {
        claims.pending = { slot, at: now };
        this.countOutlier(index, 'ahead');
        return false;
      }
      this.#claims[backing.index]!.pending = undefined;
      if (backing.pending !== undefined) this.#mark(backing.index, backing.pending);
    }
    claims.pending = undefined;
    this.#mark(index, { slot, at: now });
    return true;
  }

  /** An answer of endpoint `index` older than the floor its read carried, or beyond the ceiling: counted. */
  countOutlier(index: number, direction: 'ahead' | 'behind'): void {
    this.options.metrics.rpcSlotOutliers.inc({ chain: this.options.chain, endpoint: this.options.labels[index]!, direction });
  }

  /** Endpoint `index`'s latest accepted slot. */
  latest(index: number): SlotMark | undefined {
    return this.#claims[index]!.latest;
  }

  /** Whether endpoint `index`'s latest mark is beyond what the chain can have made by now (an unconfirmed first claim). */
  isAhead(index: number): boolean {
    const { latest } = this.#claims[index]!;
    const now = this.options.now();
    if (latest === undefined || this.#vouched(index, latest.slot, now)) return false;
    return latest.slot > slotCeiling(corroboratedSlot(this.#claims, now), this.#rate(), this.options.maxSlotLag, now);
  }

  /** The floor reads carry as minContextSlot; undefined before two answers agreed on a slot. */
  floor(): number | undefined {
    return this.#floor;
  }

  /** A decision rests on the view at `slot` (a landing): later reads must not see an older one. At most the ceiling. */
  restOn(slot: number): void {
    const now = this.options.now();
    const ceiling = slotCeiling(corroboratedSlot(this.#claims, now), this.#rate(), this.options.maxSlotLag, now);
    if (slot <= ceiling) this.#raiseFloor(slot);
  }

  /** A read carrying the floor got an answer at or above it. */
  floorHonoured(): void {
    this.#refusedReads = 0;
  }

  /** A read carrying the floor failed because no endpoint tried had reached it. */
  floorRefused(): void {
    this.#refusedReads += 1;
    if (this.#refusedReads < FLOOR_REFUSALS_BEFORE_REBASE || this.#floor === undefined) return;
    const { chain, logger, metrics } = this.options;
    logger?.warn(
      { chain, floor: this.#floor, reads: this.#refusedReads },
      `every RPC endpoint of the ${chainName(chain)} chain refused the slot floor ${this.#floor} (minContextSlot) for ${this.#refusedReads} reads in a row: ` +
        'the floor and every endpoint\'s slot mark are dropped and re-based on the next answers; an endpoint claimed slots the chain has not made',
    );
    metrics.rpcSlotFloorRebases.inc({ chain });
    for (const claims of this.#claims) Object.assign(claims, emptyClaims());
    this.#samples = [];
    this.#floor = undefined;
    this.#refusedReads = 0;
    metrics.rpcSlotFloor.remove({ chain });
  }

  #mark(index: number, mark: SlotMark): void {
    const claims = this.#claims[index]!;
    claims.previous = claims.latest;
    claims.latest = mark;
    const corroborated = corroboratedSlot(this.#claims, mark.at);
    if (corroborated === undefined) return;
    const last = this.#samples.at(-1);
    // Each sample at the time its slot was claimed: C can be a claim made long before the one that confirmed it.
    // A slot that stays (a halted chain) is sampled too, every SAMPLE_EVERY_MS: its pace is measured as well.
    if (last === undefined || (corroborated.at > last.at && (corroborated.slot !== last.slot || corroborated.at - last.at >= SAMPLE_EVERY_MS))) this.#samples.push(corroborated);
    while (this.#samples.length > 2 && mark.at - this.#samples[0]!.at > RATE_WINDOW_MS) this.#samples.shift();
    this.#raiseFloor(corroborated.slot);
  }

  #raiseFloor(slot: number): void {
    if (this.#floor !== undefined && slot <= this.#floor) return;
    this.#floor = slot;
    this.options.metrics.rpcSlotFloor.set({ chain: this.options.chain }, slot);
  }

  /** Endpoint `index`'s own run backs `slot`: it rose as a chain does, and not further than VOUCH_LAGS lags beyond C. */
  #vouched(index: number, slot: number, now: number): boolean {
    const farthest = slotCeiling(corroboratedSlot(this.#claims, now), this.#rate(), VOUCH_LAGS * this.options.maxSlotLag, now);
    return isVouched(this.#claims[index]!.run) && slot <= farthest;
  }

  #rate(): number | undefined {
    return slotRateBound(this.#samples);
  }
}

function emptyClaims(): EndpointClaims {
  return { latest: undefined, previous: undefined, pending: undefined, run: undefined };
}
