/**
 * The decision taken before a vote transaction is signed after an unknown outcome (a lost
 * sendTransaction response, a transaction left unresolved by an aborted or timed-out call, a
 * blockhash that expired unlanded): which of the planned votes may still be sent, given this
 * authority's `next_index` read from the tracker at confirmed and the entry indices of vote
 * transactions known to have landed.
 *
 * The program accepts a vote only at `index == next_index`, so votes below `next_index`
 * have landed (or can never land) and are dropped. Sending is allowed only when that is
 * explained by our own landed transactions and the remaining votes start exactly at
 * `next_index` without repeating a landed one; anything else means the plan is stale
 * (rewound by a threshold no or a governance reset) or another signer uses this key, and the
 * next cycle must plan again from a fresh read.
 */

export type VoteDecision<V> =
  /** Send these votes (possibly none: everything planned has landed). */
  | { kind: 'send'; votes: V[] }
  /** Votes below next_index that no transaction known to this server carried. */
  | { kind: 'unexplained'; indices: number[]; nextIndex: number }
  /** The remaining votes do not continue at next_index, or repeat a landed vote after a rewind. */
  | { kind: 'stale'; firstIndex: number; nextIndex: number };

export function reconcileVotes<V extends { index: number }>(
  votes: readonly V[],
  nextIndex: number,
  landedIndices: ReadonlySet<number>,
): VoteDecision<V> {
  const unexplained = votes.filter((vote) => vote.index < nextIndex && !landedIndices.has(vote.index)).map((vote) => vote.index);
  if (unexplained.length > 0) return { kind: 'unexplained', indices: unexplained, nextIndex };
  const remaining = votes.filter((vote) => vote.index >= nextIndex);
  const first = remaining[0];
  if (first === undefined) return { kind: 'send', votes: [] };
  if (first.index !== nextIndex || remaining.some((vote) => landedIndices.has(vote.index))) {
    return { kind: 'stale', firstIndex: first.index, nextIndex };
  }
  return { kind: 'send', votes: remaining };
}
