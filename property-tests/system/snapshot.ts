import type { PublicKey } from '@solana/web3.js';
import { decodeDepositEntries, decodeTrackerHeader, decodeWithdrawEntries } from '../../src/chain/codec/accounts.js';
import { DEPOSIT_ENTRY_SIZE, TRACKER_HEADER_SIZE, WITHDRAW_ENTRY_SIZE } from '../../src/chain/codec/layout.js';
import type { DepositEntry, TrackerHeader, WithdrawEntry } from '../../src/chain/types.js';
import type { DevnetNode } from '../../devnet/index.js';

/**
 * Both trackers as the chains hold them right now, decoded with the project's codecs straight
 * from the devnet's ledger (no RPC, so no fault can touch the observer). Entries run
 * 0 .. entry_count: the property tests use small trackers.
 */

interface TrackerState<E> {
  header: TrackerHeader;
  entries: E[];
}

export interface BridgeState {
  source: TrackerState<DepositEntry>;
  target: TrackerState<WithdrawEntry>;
}

export interface TrackerAddresses {
  depositTracker: PublicKey;
  withdrawTracker: PublicKey;
}

export function readBridgeState(source: DevnetNode, target: DevnetNode, trackers: TrackerAddresses): BridgeState {
  return {
    source: readDepositTracker(source, trackers.depositTracker),
    target: readWithdrawTracker(target, trackers.withdrawTracker),
  };
}

function readDepositTracker(node: DevnetNode, address: PublicKey): TrackerState<DepositEntry> {
  const { account, data } = accountData(node, address);
  const header = decodeTrackerHeader(data, 'DepositTracker', account);
  const end = TRACKER_HEADER_SIZE + Number(header.entryCount) * DEPOSIT_ENTRY_SIZE;
  return { header, entries: decodeDepositEntries(data.subarray(TRACKER_HEADER_SIZE, end), account, 0) };
}

function readWithdrawTracker(node: DevnetNode, address: PublicKey): TrackerState<WithdrawEntry> {
  const { account, data } = accountData(node, address);
  const header = decodeTrackerHeader(data, 'WithdrawTracker', account);
  const end = TRACKER_HEADER_SIZE + Number(header.entryCount) * WITHDRAW_ENTRY_SIZE;
  return { header, entries: decodeWithdrawEntries(data.subarray(TRACKER_HEADER_SIZE, end), account, 0) };
}

function accountData(node: DevnetNode, address: PublicKey): { account: string; data: Uint8Array } {
  const account = address.toBase58();
  const stored = node.bank.account(account);
  if (stored === undefined) throw new Error(`the ${node.name} chain holds no tracker at ${account}: was the world bootstrapped?`);
  return { account, data: stored.data };
}

/** This authority's next_index on a tracker, or undefined when it is not one of its authorities. */
export function nextIndexOf(header: TrackerHeader, authority: string): number | undefined {
  const slot = header.authorities.indexOf(authority);
  const vote = slot < 0 ? undefined : header.votes[slot];
  return vote === undefined ? undefined : Number(vote.nextIndex);
}
