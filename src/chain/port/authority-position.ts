import { BridgeError } from '../../errors.js';
import type { ChainSide } from '../../domain.js';
import { malformedAccount } from '../codec/account-errors.js';
import type { TrackerHeader } from '../types.js';

/**
 * This authority's place in a tracker header, looked up in one place for the chain client and
 * the planners: its slot (the bit it owns in vote masks) and its own `next_index` (rule 3.4),
 * with the checked u64-to-index conversion both use.
 */

/** Which tracker a header came from, for messages; the planners know the chain, not the address. */
export interface TrackerWhere {
  chain: ChainSide;
  account?: string;
}

/** A u64 counter or position from a header as an entry index (a JS number). */
export function toEntryIndex(value: bigint, account: string, field: string): number {
  if (value <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(value);
  const reason = `is ${value}, above the largest entry index this server handles (${Number.MAX_SAFE_INTEGER})`;
  throw malformedAccount(account, field, reason);
}

/** This authority's position in a tracker's authority set (the bit it owns in vote masks). */
export function authoritySlot(header: TrackerHeader, authority: string, where: TrackerWhere): number {
  const slot = header.authorities.indexOf(authority);
  if (slot >= 0) return slot;
  throw new BridgeError(
    'CHAIN__AUTHORITY_NOT_FOUND',
    { ...(where.account === undefined ? {} : { account: where.account }), chain: where.chain, authority },
    { tracker: header.kind, authorityCount: header.authorityCount },
  );
}

/** This authority's `next_index` in a tracker (the next entry it must vote on, rule 3.4). */
export function ownNextIndex(header: TrackerHeader, authority: string, where: TrackerWhere): number {
  const slot = authoritySlot(header, authority, where);
  const vote = header.votes[slot];
  const account = where.account ?? header.kind;
  if (vote === undefined) throw malformedAccount(account, `votes[${slot}]`, 'is missing for a listed authority');
  return toEntryIndex(vote.nextIndex, account, `votes[${slot}].next_index`);
}
