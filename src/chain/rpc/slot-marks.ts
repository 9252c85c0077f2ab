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
 *   server measures how fast that is rather than assuming 400 ms (before C's samples span
 *   MIN_RATE_SPAN_MS nothing is measured, and no claim is judged ahead). An outlier is counted and
 *   ignored, unless something backs it: another endpoint's claim at the same height (within
 *   maxSlotLag: the chain itself moved), or the claimant's own run of claims, each risen from
 *   the one before by no more than maxSlotLag plus what the chain makes in between, which has
 *   risen over at least MIN_RATE_SPAN_MS (a node ahead of the others that advances as a chain
 *   does), up to VOUCH_LAGS x maxSlotLag beyond C. A node that repeats one far slot, jumps
 *   again, or runs further ahead than that stays an outlier.
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
  /** Its latest claim beyond the ceiling, waiting for another endpoint's answer to corroborate it. */
  pending: SlotMark | undefined;
  /** Its current run of claims (accepted or not) that rose as a chain does: the first and the latest. */
  run: { first: SlotMark; last: SlotMark } | undefined;
}

/** The slot two answers reached, and when the answer that claimed it was made; undefined while no two answers agree on one. */
export function corroboratedSlot(claims: readonly EndpointClaims[], now: number): SlotMark | undefined {
  const fresh = claims.map((one) => one.latest).filter((mark): mark is SlotMark => mark !== undefined && now - mark.at <= MARK_FRESH_MS);
  if (fresh.length >= 2) return [...fresh].sort((a, b) => b.slot - a.slot)[1];
  const lone = claims.find((one) => one.latest !== undefined && now - one.latest.at <= MARK_FRESH_MS);
  if (lone?.previous === undefined) return undefined;
  return lone.previous.slot <= lone.latest!.slot ? lone.previous : lone.latest;
}

/**
 * The bound on how fast slots rise, in slots per ms, from samples of C (oldest first); undefined
 * until they span MIN_RATE_SPAN_MS (nothing is measured yet: no claim is judged).
 */
export function slotRateBound(samples: readonly SlotMark[]): number | undefined {
  const first = samples[0];
  const last = samples.at(-1);
  if (first === undefined || last === undefined || last.at - first.at < MIN_RATE_SPAN_MS) return undefined;
  const measured = Math.max(0, last.slot - first.slot) / (last.at - first.at);
  return RATE_MARGIN * Math.max(1 / NOMINAL_SLOT_MS, measured);
}

/** The highest slot a claim made at `now` may name: Infinity while nothing is corroborated or measured. */
export function slotCeiling(corroborated: SlotMark | undefined, rate: number | undefined, maxSlotLag: number, now: number): number {
  if (corroborated === undefined || rate === undefined) return Infinity;
  return corroborated.slot + maxSlotLag + Math.ceil(rate * Math.max(0, now - corroborated.at));
}

/** What backs a claim beyond the ceiling: another endpoint's mark or pending claim (which then becomes its mark too). */
export interface Corroboration {
  index: number;
  pending: SlotMark | undefined;
}

/**
 * Another endpoint's latest mark or pending claim that corroborates a claim of `slot` by
 * `claimant` beyond the ceiling: no older than MARK_FRESH_MS, within maxSlotLag plus what the
 * chain makes since it was claimed. Undefined when none does.
 */
export function corroboratingClaim(
  claims: readonly EndpointClaims[],
  claimant: number,
  slot: number,
  rate: number,
  maxSlotLag: number,
  now: number,
): Corroboration | undefined {
  const agrees = (mark: SlotMark | undefined) =>
    mark !== undefined && now - mark.at <= MARK_FRESH_MS && Math.abs(slot - mark.slot) <= maxSlotLag + Math.ceil(rate * (now - mark.at));
  for (const [index, { latest, pending }] of claims.entries()) {
    if (index === claimant) continue;
    if (agrees(pending)) return { index, pending };
    if (agrees(latest)) return { index, pending: undefined };
  }
  return undefined;
}

/**
 * The endpoint's run after it claims `claim`: the same run when the claim rose from the run's
 * last by at most maxSlotLag plus what the chain makes in between (any rise while the pace is
 * not measured), else a new run from it.
 */
export function nextRun(
  run: EndpointClaims['run'],
  claim: SlotMark,
  rate: number | undefined,
  maxSlotLag: number,
): NonNullable<EndpointClaims['run']> {
  if (run === undefined || claim.slot < run.last.slot) return { first: claim, last: claim };
  const rise = claim.slot - run.last.slot;
  if (rate !== undefined && rise > maxSlotLag + Math.ceil(rate * (claim.at - run.last.at))) return { first: claim, last: claim };
  return { first: run.first, last: claim };
}

/**
 * How far beyond C a run of one endpoint's own claims can back it, in BRIDGE_RPC_MAX_SLOT_LAGs
 * (12,800 slots, 85 minutes of 400 ms slots, by default): no node that still answers lags that far
 * behind an honest one, so a node that far ahead is lying, however steadily it rises.
 */
export const VOUCH_LAGS = 100;

/** Whether a run backs its claims beyond the ceiling: it has risen over at least MIN_RATE_SPAN_MS. */
export function isVouched(run: EndpointClaims['run']): boolean {
  return run !== undefined && run.last.at - run.first.at >= MIN_RATE_SPAN_MS && run.last.slot > run.first.slot;
}
