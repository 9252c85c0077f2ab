import { authoritySlot } from '../../chain/port/authority-position.js';
import type { BridgeView } from '../../chain/port/bridge-chains.js';
import type { DepositEntry } from '../../chain/types.js';

/**
 * Whose turn a cleanup is (docs/crank.md "Cleanup turns"). cleanup_deposit is permissionless and
 * every authority's crank sees an entry finalize at the same read, so without turns every crank
 * sends it at once: one lands, the others land failing with CleanupAlreadyCompleted and pay
 * their fee. Entry `i` is the turn of the first authority, from slot `i mod authority_count` of
 * the DepositTracker on (cyclically), that voted on the entry: a Finalized entry holds at least
 * `threshold` votes, and an authority that cast none gives no sign that its crank runs. Another
 * authority's crank cleans the entry up once it has waited the grace since this crank first saw
 * it waiting: a crank that stopped holds its turns back by at most the grace. The first
 * sightings live in the machine's context only: a restart forgets them and waits one grace
 * again, a delay and never a wrong send.
 */

/** The grace, in this server's poll intervals: `CLEANUP_GRACE_POLLS × BRIDGE_POLL_INTERVAL_SECS` (in ms). */
export const CLEANUP_GRACE_POLLS = 2;

/** An entry left to the authority whose turn it is, since this crank first saw it waiting (monotonic ms). */
export interface CleanupWait {
  index: number;
  sinceMs: number;
}

/** The waits carried from the last read, the read's time, and the grace (0: no turns, every candidate is planned). */
export interface CleanupTurns {
  waits: readonly CleanupWait[];
  atMs: number;
  graceMs: number;
}

export const NO_TURNS: CleanupTurns = { waits: [], atMs: 0, graceMs: 0 };

export function cleanupGraceMs(pollIntervalMs: number): number {
  return CLEANUP_GRACE_POLLS * pollIntervalMs;
}

/**
 * For the candidates of one read: a function telling whether this crank leaves entry `index` to
 * another authority for now, and the waits to carry to the next read (those left this time,
 * their first sighting kept: one per candidate read, so bounded by the read).
 */
export function cleanupTurnsOf(
  view: BridgeView,
  turns: CleanupTurns,
): { leaves: (index: number, entry: DepositEntry) => boolean; waits: CleanupWait[] } {
  const waits: CleanupWait[] = [];
  if (turns.graceMs <= 0) return { leaves: () => false, waits };
  const { header } = view.deposits;
  const own = authoritySlot(header, view.authority, { chain: 'source' });
  const count = header.authorityCount;
  const since = new Map(turns.waits.map((wait) => [wait.index, wait.sinceMs]));
  const leaves = (index: number, entry: DepositEntry): boolean => {
    const turn = cleanupTurn(index, entry, count);
    if (turn === null || turn === own) return false;
    const sinceMs = since.get(index) ?? turns.atMs;
    if (turns.atMs - sinceMs >= turns.graceMs) return false;
    waits.push({ index, sinceMs });
    return true;
  };
  return { leaves, waits };
}

/**
 * The slot whose turn entry `index`'s cleanup is: the first voter on it from `index mod count` on,
 * cyclically; null (anyone's) for an entry with no vote, which the program never finalizes.
 */
export function cleanupTurn(index: number, entry: DepositEntry, count: number): number | null {
  const voters = entry.yesVotes | entry.noVotes;
  for (let step = 0; step < count; step++) {
    const slot = (index + step) % count;
    if (((voters >> slot) & 1) === 1) return slot;
  }
  return null;
}
