import type { TrackerHeader } from '../../src/chain/types.js';
import { ProgramError } from './errors.js';

/** Authority positions, vote bits and thresholds (PROTOCOL.md "Chains, program, authorities"). */

/** The slot of the authority voting on `index`: one of the tracker's authorities (rule 3.4: on its `next_index`). */
export function votingSlot(header: TrackerHeader, signer: string, index: bigint): number {
  const slot = authoritySlot(header, signer);
  checkVotePosition(header, slot, index);
  return slot;
}

/** The signer's authority slot `k` (it owns bit `k` of every vote mask). */
function authoritySlot(header: TrackerHeader, signer: string): number {
  const slot = header.authorities.indexOf(signer);
  if (slot < 0) throw new ProgramError('NotAnAuthority', `signer ${signer} is not one of the tracker's ${header.authorityCount} authorities`);
  return slot;
}

/** Rule 3.4: an authority votes on its `next_index` and nothing else. */
function checkVotePosition(header: TrackerHeader, slot: number, index: bigint): void {
  const nextIndex = header.votes[slot]!.nextIndex;
  if (index !== nextIndex) {
    throw new ProgramError('VoteOutOfOrder', `authority ${header.authorities[slot]} voted on index ${index}, its next_index is ${nextIndex}`);
  }
}

/** One vote as both ack_* instructions record it: its bit in the entry's yes or no mask, and the authority's position and last vote. */
export function recordVote(header: TrackerHeader, entry: { yesVotes: number; noVotes: number }, slot: number, index: bigint, approve: boolean): void {
  if (approve) entry.yesVotes |= voteBit(slot);
  else entry.noVotes |= voteBit(slot);
  header.votes[slot] = { nextIndex: index + 1n, lastVote: approve ? 'Yes' : 'No' };
}

function voteBit(slot: number): number {
  return 1 << slot;
}

function popcount(mask: number): number {
  let count = 0;
  for (let bits = mask; bits !== 0; bits &= bits - 1) count += 1;
  return count;
}

export function hasThresholdYes(header: TrackerHeader, yesVotes: number): boolean {
  return popcount(yesVotes) >= header.threshold;
}

/** Yes can no longer reach the threshold. */
export function hasThresholdNo(header: TrackerHeader, noVotes: number): boolean {
  return popcount(noVotes) > header.authorityCount - header.threshold;
}

/** `next_index = min(next_index, index)` for every authority; `last_vote` is never changed. */
export function rewindPositions(header: TrackerHeader, index: bigint): void {
  header.votes = header.votes.map((vote) => (vote.nextIndex > index ? { ...vote, nextIndex: index } : vote));
}
