import { createHash } from 'node:crypto';
import type { CreatedTokenAccount, DepositResult, DepositStatus, LastVote, RejectionReason, TrackerKind, WithdrawStatus } from '../types.js';

/** Sizes, discriminators and enum tags of PROTOCOL.md "Accounts". */

export const TRACKER_HEADER_SIZE = 848;
export const DEPOSIT_ENTRY_SIZE = 160;
export const WITHDRAW_ENTRY_SIZE = 144;
export const TOKEN_PAIR_SIZE = 104;
export const DEPOSIT_RESULT_SIZE = 16;
export const AUTHORITY_VOTE_SIZE = 16;
export const DISCRIMINATOR_SIZE = 8;
export const MAX_AUTHORITIES = 16;
export const DEFAULT_PROGRAM_ID = 'BridgeProgram111111111111111111111111111111';

export type AccountName = TrackerKind | 'TokenPair';

/** Anchor's discriminator: the first 8 bytes of sha256("<namespace>:<name>"). */
export function anchorDiscriminator(namespace: 'account' | 'global', name: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(`${namespace}:${name}`).digest().subarray(0, DISCRIMINATOR_SIZE));
}

export const ACCOUNT_DISCRIMINATORS: Readonly<Record<AccountName, Uint8Array>> = {
  DepositTracker: anchorDiscriminator('account', 'DepositTracker'),
  WithdrawTracker: anchorDiscriminator('account', 'WithdrawTracker'),
  TokenPair: anchorDiscriminator('account', 'TokenPair'),
};

export function entrySize(kind: TrackerKind): number {
  return kind === 'DepositTracker' ? DEPOSIT_ENTRY_SIZE : WITHDRAW_ENTRY_SIZE;
}

export function entryOffset(kind: TrackerKind, index: number): number {
  return TRACKER_HEADER_SIZE + index * entrySize(kind);
}

export function trackerAccountSize(kind: TrackerKind, capacity: number): number {
  return entryOffset(kind, capacity);
}

/** Solana's MAX_PERMITTED_DATA_LENGTH: no account holds more data. */
export const MAX_ACCOUNT_DATA_BYTES = 10 * 1024 * 1024;

/** The largest capacity a tracker can have: (10,485,760 − 848) / entry size (65,530 deposits, 72,811 withdrawals). */
export function maxTrackerCapacity(kind: TrackerKind): number {
  return Math.floor((MAX_ACCOUNT_DATA_BYTES - TRACKER_HEADER_SIZE) / entrySize(kind));
}

// Enum tags: the array position is the u8 written on chain.
export const DEPOSIT_STATUSES: readonly DepositStatus[] = ['Initialized', 'Relaying', 'Finalized'];
export const WITHDRAW_STATUSES: readonly WithdrawStatus[] = ['Empty', 'Voting', 'Finalized'];
export const CREATED_TOKEN_ACCOUNT: readonly CreatedTokenAccount[] = ['Pending', 'Created', 'NotRequired'];
export const LAST_VOTES: readonly LastVote[] = ['None', 'Yes', 'No'];
export const REJECTION_REASONS: readonly RejectionReason[] = [
  'InternalError',
  'InsufficientFunds',
  'LimitExceeded',
  'TokenPairFrozen',
  'TokenPairNotFound',
];

export const DEPOSIT_RESULT_KINDS: readonly DepositResult['kind'][] = ['None', 'Confirmed', 'Rejected'];

/** The u8 tag of `value` in `table`; the table is closed over the type, so this always finds it. */
export function tagOf<T extends string>(table: readonly T[], value: T, field: string): number {
  const tag = table.indexOf(value);
  if (tag < 0) throw new RangeError(`${field} must be one of ${table.join(', ')}, got ${String(value)}`);
  return tag;
}
