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
 * authority's crank cleans the entry up at its CLEANUP_GRACE_READS-th read after the first that
 * showed the entry waiting: a crank that stopped (or an authority that votes and never cleans up)
 * holds its turns back by that many of the others' cycles. The grace is counted in reads, not
 * time, so a cycle decides the same whatever the machine's load, and a cycle driven by POST
 * /crank/once counts as one. The sightings live in the machine's context only: a restart forgets
 * them and waits the grace again, a delay and never a wrong send.
 */

/** Reads after the first one that showed an entry waiting for another authority's turn, before this crank cleans it up. */
export const CLEANUP_GRACE_READS = 2;

/** An entry left to the authority whose turn it is, and how many reads since the first showed it waiting. */
export interface CleanupWait {
  index: number;
  reads: number;
}

/** The waits carried from the last read, and the grace in reads (0: no turns, every candidate is planned). */
export interface CleanupTurns {
  waits: readonly CleanupWait[];
  graceReads: number;
}

export const NO_TURNS: CleanupTurns = { waits: [], graceReads: 0 };

/**
 * For the candidates of one read: a function telling whether this crank leaves entry `index` to
 * another authority for now, and the waits to carry to the next read (every candidate of another
 * authority's turn with its count of reads, past the grace too, so a cleanup that failed is not
 * held back again: one per candidate read, so bounded by the read).
 */
export function cleanupTurnsOf(
  view: BridgeView,
  turns: CleanupTurns,
): { leaves: (index: number, entry: DepositEntry) => boolean; waits: CleanupWait[] } {
  const waits: CleanupWait[] = [];
  if (turns.graceReads <= 0) return { leaves: () => false, waits };
  const { header } = view.deposits;
  const own = authoritySlot(header, view.authority, { chain: 'source' });
  const count = header.authorityCount;
  const seen = new Map(turns.waits.map((wait) => [wait.index, wait.reads]));
  const leaves = (index: number, entry: DepositEntry): boolean => {
    const turn = cleanupTurn(index, entry, count);
    if (turn === null || turn === own) return false;
    const reads = (seen.get(index) ?? -1) + 1;
    waits.push({ index, reads });
    return reads < turns.graceReads;
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
