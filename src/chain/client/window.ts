import { BridgeError } from '../../errors.js';
import { malformedAccount } from '../codec/account-errors.js';
import type { ChainSide } from '../../metrics/metrics.js';
import type { TrackerHeader } from '../types.js';

/**
 * Which entries a read fetches: only those that can still need this authority's work, so that
 * the cost of a cycle grows with pending work, not with the size of the tracker.
 */

/** A u64 counter or position from a header as an entry index (a JS number). */
export function toEntryIndex(value: bigint, account: string, field: string): number {
  if (value <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(value);
  const reason = `is ${value}, above the largest entry index this server handles (${Number.MAX_SAFE_INTEGER})`;
  throw malformedAccount(account, field, reason);
}

/** This authority's position in a tracker's authority set (the bit it owns in vote masks). */
export function authoritySlot(header: TrackerHeader, authority: string, where: { account: string; chain: ChainSide }): number {
  const slot = header.authorities.indexOf(authority);
  if (slot >= 0) return slot;
  throw new BridgeError(
    'CHAIN__AUTHORITY_NOT_FOUND',
    { account: where.account, chain: where.chain, authority },
    `authority ${authority} (BRIDGE_AUTHORITY_KEYPAIR) is not one of the ${header.authorityCount} authorities ` +
      `of ${header.kind} ${where.account} on the ${where.chain === 'source' ? 'source' : 'destination'} chain; ` +
      'check the keypair file and the chain ids',
  );
}

/** This authority's `next_index` in a tracker (the next entry it must vote on, rule 3.4). */
export function ownNextIndex(header: TrackerHeader, authority: string, where: { account: string; chain: ChainSide }): number {
  const slot = authoritySlot(header, authority, where);
  const vote = header.votes[slot];
  if (vote === undefined) throw malformedAccount(where.account, `votes[${slot}]`, 'is missing for a listed authority');
  return toEntryIndex(vote.nextIndex, where.account, `votes[${slot}].next_index`);
}

export interface DepositWindowInputs {
  /** Source DepositTracker: every entry below is cleaned up. */
  settledPrefix: number;
  entryCount: number;
  /** This authority's next ack_withdraw position (source tracker). */
  ownSourceNext: number;
  /** This authority's next ack_deposit position (destination tracker). */
  ownTargetNext: number;
}

/**
 * First source entry to read. Below settled_prefix nothing waits for cleanup; below both own
 * positions this authority has voted on everything: ack_deposit reads source entries from its
 * destination position, ack_withdraw from its source position.
 */
export function depositWindowStart(p: DepositWindowInputs): number {
  return Math.min(p.settledPrefix, p.ownSourceNext, p.ownTargetNext, p.entryCount);
}

export interface WithdrawWindowInputs {
  entryCount: number;
  ownSourceNext: number;
  ownTargetNext: number;
}

/**
 * First destination entry to read: ack_deposit needs the destination entries from its own
 * destination position (proposals to compare), ack_withdraw from its source position (results).
 */
export function withdrawWindowStart(p: WithdrawWindowInputs): number {
  return Math.min(p.ownTargetNext, p.ownSourceNext, p.entryCount);
}

export interface EntryRange {
  /** First entry index. */
  start: number;
  /** One past the last entry index. */
  end: number;
}

/**
 * Splits entries `start .. end-1` into ranges of whole entries of at most `maxBytes` bytes
 * each, one dataSlice request per range.
 */
export function sliceRanges(range: EntryRange, entrySize: number, maxBytes: number): EntryRange[] {
  const perSlice = Math.floor(maxBytes / entrySize);
  if (perSlice < 1) throw new RangeError(`a slice of ${maxBytes} bytes cannot hold one ${entrySize}-byte entry`);
  const ranges: EntryRange[] = [];
  for (let start = range.start; start < range.end; start += perSlice) {
    ranges.push({ start, end: Math.min(start + perSlice, range.end) });
  }
  return ranges;
}

/**
 * Groups sorted, distinct entry indices into ranges that each fit one slice, so that scattered
 * entries cost one request per neighbourhood rather than one per entry.
 */
export function coveringRanges(sortedIndices: readonly number[], entrySize: number, maxBytes: number): EntryRange[] {
  const perSlice = Math.floor(maxBytes / entrySize);
  const ranges: EntryRange[] = [];
  for (const index of sortedIndices) {
    const last = ranges.at(-1);
    if (last !== undefined && index + 1 - last.start <= perSlice) last.end = index + 1;
    else ranges.push({ start: index, end: index + 1 });
  }
  return ranges;
}
