/**
 * What a slot an endpoint claims is worth: pure arithmetic over each endpoint's claims, fed by
 * ./slot-view.ts (docs/chain-client.md, "What a node can claim, and what the server does with it").
 *
 * - An endpoint's mark is its latest accepted claim (a context slot, a getSlot answer), not the
 *   highest it ever made: a node that lied once is believed again when it tells the truth.
 * - The corroborated slot C is one that two answers reached: the second highest fresh mark when
 *   two endpoints or more have one (two endpoints reached it), else the lower of the lone
 *   endpoint's last two marks (one lie is not enough).
 * - A claim is an outlier ahead when it passes the ceiling
 *     C.slot + maxSlotLag + ceil(rate x (now - C.at))
 *   where rate, in slots per ms, is RATE_MARGIN x max(1 / NOMINAL_SLOT_MS, the rate C rose at
 *   over the last RATE_WINDOW_MS): a slot rises only as fast as the cluster makes slots, and the
 *   server measures how fast that is rather than assuming 400 ms. An outlier is counted and
 *   ignored, unless a second answer (another endpoint's, or the lone endpoint's next) claims
 *   the same height within maxSlotLag: then the chain itself moved, and both are accepted.
 * - A claim below the floor (the highest C so far, or a slot a decision rests on) is an outlier
 *   behind: that answer is older than what the server already knows.
 */

/** A Solana cluster's nominal slot time: the least rate the bound allows, whatever was measured. */
export const NOMINAL_SLOT_MS = 400;
/** The bound is this many times the rate measured (bursts; a devnet lands each transaction in a block of its own). */
export const RATE_MARGIN = 2;
/** The rate is measured over C's samples of this window... */
export const RATE_WINDOW_MS = 30_000;
/** ...once they span at least this long. */
export const MIN_RATE_SPAN_MS = 1_000;
/**
 * A mark older than this no longer corroborates anything (an endpoint that stopped answering).
 * Three slot probes' worth (they run every 2 s while reads happen).
 */
export const MARK_FRESH_MS = 6_000;

export interface SlotMark {
  slot: number;
  /** When it was claimed (ms, the pool's clock). */
  at: number;
}

/** What one endpoint claimed. */
export interface EndpointClaims {
  /** Its latest accepted claim. */
  latest: SlotMark | undefined;
  /** The accepted claim before it. */
  previous: SlotMark | undefined;
  /** Its latest claim beyond the ceiling, waiting for a second answer to corroborate it. */
  pending: SlotMark | undefined;
}

export type ClaimVerdict = 'accepted' | 'ahead' | 'behind';

/** The slot two answers reached, and when the answer that claimed it was made; undefined while no two answers agree on one. */
export function corroboratedSlot(claims: readonly EndpointClaims[], now: number): SlotMark | undefined {
  const fresh = claims.map((one) => one.latest).filter((mark): mark is SlotMark => mark !== undefined && now - mark.at <= MARK_FRESH_MS);
  if (fresh.length >= 2) return [...fresh].sort((a, b) => b.slot - a.slot)[1];
  const lone = claims.find((one) => one.latest !== undefined && now - one.latest.at <= MARK_FRESH_MS);
  if (lone?.previous === undefined) return undefined;
  return lone.previous.slot <= lone.latest!.slot ? lone.previous : lone.latest;
}

/** The bound on how fast slots rise, in slots per ms, from samples of C (oldest first). */
export function slotRateBound(samples: readonly SlotMark[]): number {
  const nominal = 1 / NOMINAL_SLOT_MS;
  const first = samples[0];
  const last = samples.at(-1);
  if (first === undefined || last === undefined || last.at - first.at < MIN_RATE_SPAN_MS) return RATE_MARGIN * nominal;
  const measured = Math.max(0, last.slot - first.slot) / (last.at - first.at);
  return RATE_MARGIN * Math.max(nominal, measured);
}

/** The highest slot a claim made at `now` may name: Infinity while nothing is corroborated. */
export function slotCeiling(corroborated: SlotMark | undefined, rate: number, maxSlotLag: number, now: number): number {
  if (corroborated === undefined) return Infinity;
  return corroborated.slot + maxSlotLag + Math.ceil(rate * Math.max(0, now - corroborated.at));
}

/** Whether `slot` is within `ceiling` (inclusive) and at or above `floor`. */
export function judgeClaim(slot: number, floor: number | undefined, ceiling: number): ClaimVerdict {
  if (slot > ceiling) return 'ahead';
  if (floor !== undefined && slot < floor) return 'behind';
  return 'accepted';
}

/**
 * The claim that corroborates a claim beyond the ceiling: another endpoint's latest mark or
 * pending claim (the claimant's own pending one too, when it is `lone`), no older than
 * MARK_FRESH_MS, within maxSlotLag plus what the chain makes since it was claimed. Returns the
 * endpoint's index and whether its claim was pending, or undefined.
 */
export function corroboratingClaim(
  claims: readonly EndpointClaims[],
  claimant: number,
  slot: number,
  lone: boolean,
  rate: number,
  maxSlotLag: number,
  now: number,
): { index: number; pending: SlotMark | undefined } | undefined {
  const agrees = (mark: SlotMark | undefined) =>
    mark !== undefined && now - mark.at <= MARK_FRESH_MS && Math.abs(slot - mark.slot) <= maxSlotLag + Math.ceil(rate * (now - mark.at));
  for (const [index, { latest, pending }] of claims.entries()) {
    if (index === claimant && !lone) continue;
    if (agrees(pending)) return { index, pending };
    if (index !== claimant && agrees(latest)) return { index, pending: undefined };
  }
  return undefined;
}
