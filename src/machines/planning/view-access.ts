import type { AuthorityVote, TrackerHeader } from '../../chain/types.js';
import type { TrackerWindow } from '../../chain/bridge-chains.js';
import { BridgeError } from '../../errors.js';

/**
 * Reading a BridgeView the way the planners need it: this authority's vote slot and single
 * entries by index, failing loudly when the read does not cover what voting needs.
 */

/** This authority's AuthorityVote in a tracker header (rule 3.4: its own next position). */
export function ownVote(header: TrackerHeader, authority: string): AuthorityVote {
  const slot = header.authorities.indexOf(authority);
  const vote = header.votes[slot];
  if (slot < 0 || vote === undefined) {
    throw new BridgeError(
      'CRANK__AUTHORITY_NOT_FOUND',
      { tracker: header.kind, authority },
      `${authority} is not an authority of the ${header.kind} (it lists ${header.authorities.length}); ` +
        'check BRIDGE_AUTHORITY_KEYPAIR and the chain ids: this server cannot vote on this tracker',
    );
  }
  return vote;
}

/** Entry `index` of a window; the planners only ask for entries below entry_count. */
export function entryAt<E>(window: TrackerWindow<E>, index: number): E {
  const entry = index >= window.start ? window.entries[index - window.start] : undefined;
  if (entry === undefined) {
    const windowEnd = window.start + window.entries.length;
    throw new BridgeError(
      'CRANK__ENTRY_NOT_FOUND',
      { tracker: window.header.kind, index, windowStart: window.start, windowEnd },
      `${window.header.kind} entry ${index} is not in the entries BridgeChains.readState read ` +
        `(${window.start}..${windowEnd}); the read window must start at or below every position ` +
        'the crank votes or cleans from (docs/crank.md "What the planners read")',
    );
  }
  return entry;
}

/**
 * An entry index or count as a JS number. Exact: a tracker account is at most 10 MiB, so
 * capacity (and with it every index) stays far below 2^53.
 */
export function entryIndex(value: bigint): number {
  return Number(value);
}
