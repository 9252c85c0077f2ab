import type { Commitment } from '@solana/web3.js';
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
 * The slots one chain's endpoints claim, judged (./slot-marks.ts), and the floor each read of
 * the chain carries as minContextSlot, per bank (docs/chain-client.md, "One floor per bank"). A
 * node answers a read from the bank of its commitment and judges minContextSlot against that
 * bank (Agave's `get_bank_with_config`): processed is the head, confirmed trails it by about 1-2
 * slots, finalized by about 32. So:
 *
 * - confirmed claims (context slots of confirmed reads, the slot probes) are the marks: the
 *   confirmed floor is the highest corroborated one, raised by slots a decision rests on (a
 *   landing of the server's own transaction, seen confirmed);
 * - finalized claims are marks of their own: the finalized floor is the highest slot two
 *   finalized answers reached (or a landing seen finalized), never a confirmed slot, which the
 *   finalized bank reaches about 13 s later;
 * - processed claims (a status poll's context slot) are judged against the ceiling and never
 *   marked: the head moves ahead of what any confirmed read can ask for.
 *
 * A confirmed or processed read carries the higher of the confirmed and finalized floors (a
 * node's confirmed bank is never behind its finalized one); a finalized read, the finalized
 * floor. When every endpoint refuses a bank's floor for FLOOR_REFUSALS_BEFORE_REBASE reads in a
 * row, the floors and every mark are dropped with a warn line, and the next answers build them
 * again.
 */

/** The bank a read is answered from. */
export type Bank = 'processed' | 'confirmed' | 'finalized';

/** The bank of a commitment, web3.js's deprecated names included. */
export function bankOf(commitment: Commitment): Bank {
  if (commitment === 'processed' || commitment === 'recent') return 'processed';
  if (commitment === 'finalized' || commitment === 'max' || commitment === 'root') return 'finalized';
  return 'confirmed';
}

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
  /** Each endpoint's finalized claims: the finalized floor's marks. */
  readonly #finalized: EndpointClaims[];
  #finalizedFloor: number | undefined;
  /** Reads refused at their floor in a row, per bank whose floor they carried. */
  #refusedReads = { confirmed: 0, finalized: 0 };

  constructor(private readonly options: SlotViewOptions) {
    this.#claims = options.labels.map(() => emptyClaims());
    this.#finalized = options.labels.map(() => emptyClaims());
    for (const endpoint of options.labels) {
      for (const direction of ['ahead', 'behind'] as const) options.metrics.rpcSlotOutliers.inc({ chain: options.chain, endpoint, direction }, 0);
    }
    options.metrics.rpcSlotFloorRebases.inc({ chain: options.chain }, 0);
  }

  /**
   * A slot endpoint `index` claimed (a context slot, a getSlot answer) from `bank`. A confirmed
   * claim within the ceiling (or corroborated by a second answer beyond it) becomes the
   * endpoint's mark: true. A finalized or processed claim within the ceiling is believed (a
   * finalized one is a mark of the finalized floor): true. Beyond it, a claim is counted as an
   * outlier and ignored: false.
   */
  claim(index: number, slot: number, bank: Bank): boolean {
    if (bank !== 'confirmed') return this.#claimOther(index, slot, bank);
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

  /** The floor a read from `bank` carries as minContextSlot; undefined before two answers agreed on a slot. */
  floor(bank: Bank): number | undefined {
    if (bank === 'finalized') return this.#finalizedFloor;
    if (this.#finalizedFloor === undefined) return this.#floor;
    return Math.max(this.#floor ?? this.#finalizedFloor, this.#finalizedFloor);
  }

  /**
   * A decision rests on the view at `slot` of `bank` (a landing seen confirmed or finalized):
   * later reads from that bank must not see an older one. At most the ceiling.
   */
  restOn(slot: number, bank: Exclude<Bank, 'processed'>): void {
    const now = this.options.now();
    const ceiling = slotCeiling(corroboratedSlot(this.#claims, now), this.#rate(), this.options.maxSlotLag, now);
    if (slot > ceiling) return;
    if (bank === 'finalized') this.#finalizedFloor = Math.max(this.#finalizedFloor ?? slot, slot);
    else this.#raiseFloor(slot);
  }

  /** A read carrying `bank`'s floor got an answer at or above it. */
  floorHonoured(bank: Bank): void {
    this.#refusedReads[refusalBank(bank)] = 0;
  }

  /** A read carrying `bank`'s floor failed because no endpoint tried had reached it. */
  floorRefused(bank: Bank): void {
    const counted = refusalBank(bank);
    this.#refusedReads[counted] += 1;
    const refused = this.#refusedReads[counted];
    const floor = this.floor(bank);
    if (refused < FLOOR_REFUSALS_BEFORE_REBASE || floor === undefined) return;
    const { chain, logger, metrics } = this.options;
    logger?.warn(
      { chain, floor, bank: counted, reads: refused },
      `every RPC endpoint of the ${chainName(chain)} chain refused the ${counted} slot floor ${floor} (minContextSlot, JSON-RPC -32016) for ${refused} reads in a row: ` +
        "the floors and every endpoint's slot mark are dropped and re-based on the next answers; an endpoint claimed slots the chain has not made",
    );
    metrics.rpcSlotFloorRebases.inc({ chain });
    for (const claims of [...this.#claims, ...this.#finalized]) Object.assign(claims, emptyClaims());
    this.#samples = [];
    this.#floor = undefined;
    this.#finalizedFloor = undefined;
    this.#refusedReads = { confirmed: 0, finalized: 0 };
    metrics.rpcSlotFloor.remove({ chain });
  }

  /** A finalized or processed claim: judged against the ceiling; a finalized one within it is a mark of the finalized floor. */
  #claimOther(index: number, slot: number, bank: Exclude<Bank, 'confirmed'>): boolean {
    const now = this.options.now();
    if (slot > slotCeiling(corroboratedSlot(this.#claims, now), this.#rate(), this.options.maxSlotLag, now) && !this.#vouched(index, slot, now)) {
      this.countOutlier(index, 'ahead');
      return false;
    }
    if (bank === 'processed') return true;
    const claims = this.#finalized[index]!;
    claims.previous = claims.latest;
    claims.latest = { slot, at: now };
    const corroborated = corroboratedSlot(this.#finalized, now);
    if (corroborated !== undefined && (this.#finalizedFloor === undefined || corroborated.slot > this.#finalizedFloor))
      this.#finalizedFloor = corroborated.slot;
    return true;
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
    if (last === undefined || (corroborated.at > last.at && (corroborated.slot !== last.slot || corroborated.at - last.at >= SAMPLE_EVERY_MS)))
      this.#samples.push(corroborated);
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

/** A processed read's floor is the confirmed one: its refusals count there. */
function refusalBank(bank: Bank): Exclude<Bank, 'processed'> {
  return bank === 'finalized' ? 'finalized' : 'confirmed';
}

function emptyClaims(): EndpointClaims {
  return { latest: undefined, previous: undefined, pending: undefined, run: undefined };
}
