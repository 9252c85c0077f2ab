import { authoritySlot, ownNextIndex } from '../../src/chain/port/authority-position.js';
import type { ChainSide } from '../../src/domain.js';
import { decodeDepositEntries, decodeTrackerHeader, decodeWithdrawEntries } from '../../src/chain/codec/accounts.js';
import { entryOffset } from '../../src/chain/codec/layout.js';
import type { DepositEntry, TrackerHeader, TrackerKind, WithdrawEntry } from '../../src/chain/types.js';
import type { DevnetNode } from '../../devnet/node.js';
import type { BenchWorld } from './bench-world.js';

/**
 * Both trackers read straight from the devnet's ledger with the server's own codecs: what the
 * benches measure and check is on-chain state, and their own reads neither cost an RPC call
 * nor run into injected faults.
 */

export interface Tracker<E> {
  header: TrackerHeader;
  /** Entries `from` .. entry_count (0 .. entry_count unless a reader asked for fewer): `entries[i]` is entry `from + i`. */
  entries: E[];
}

export interface Trackers {
  deposits: Tracker<DepositEntry>;
  withdrawals: Tracker<WithdrawEntry>;
}

export function readTrackers(bench: Pick<BenchWorld, 'world' | 'pair'>, from = 0): Trackers {
  const { world, pair } = bench;
  return {
    deposits: readTracker(pair.source, 'DepositTracker', world.source.depositTracker, decodeDepositEntries, from),
    withdrawals: readTracker(pair.target, 'WithdrawTracker', world.target.withdrawTracker, decodeWithdrawEntries, from),
  };
}

/** Authority `key`'s own next_index on a tracker. */
export function nextIndexOf(tracker: Tracker<unknown>, key: string): number {
  return ownNextIndex(tracker.header, key, { chain: chainOf(tracker) });
}

/** Entries on which authority `key` has a vote recorded (yes or no). */
export function votesRecordedBy(tracker: Tracker<{ yesVotes: number; noVotes: number }>, key: string): number {
  const bit = 1 << authoritySlot(tracker.header, key, { chain: chainOf(tracker) });
  return tracker.entries.filter((entry) => ((entry.yesVotes | entry.noVotes) & bit) !== 0).length;
}

function chainOf(tracker: Tracker<unknown>): ChainSide {
  return tracker.header.kind === 'DepositTracker' ? 'source' : 'target';
}

function readTracker<E>(
  node: DevnetNode,
  kind: TrackerKind,
  address: string,
  decode: (data: Uint8Array, account: string, firstIndex: number) => E[],
  from: number,
): Tracker<E> {
  const data = node.bank.account(address)?.data;
  if (data === undefined) throw new Error(`no ${kind} at ${address} on the ${node.name} chain`);
  const header = decodeTrackerHeader(data, kind, address);
  const start = Math.min(from, Number(header.entryCount));
  const used = data.subarray(entryOffset(kind, start), entryOffset(kind, Number(header.entryCount)));
  return { header, entries: decode(used, address, start) };
}
