import type { Base58, DepositEntry, DepositResult, TrackerHeader, WithdrawEntry } from './types.js';

/**
 * The narrow interface the crank machine drives. Plain data in and out, so the machine and its
 * tests can run on an in-memory implementation. Votes and reports are JSON-safe (no bigint):
 * they travel through the machine's context.
 */
export interface BridgeChains {
  /** The authority this server signs for (base58). */
  readonly authority: Base58;
  /** Read both trackers: headers plus the window of entries that can still need work. */
  readState(signal: AbortSignal): Promise<BridgeView>;
  /** Submit ack_deposit votes on the destination, in order, batched into as few transactions as fit. */
  ackDeposits(votes: readonly AckDepositVote[], signal: AbortSignal): Promise<SubmitReport>;
  /** Submit ack_withdraw votes on the source, in order, batched. */
  ackWithdraws(votes: readonly AckWithdrawVote[], signal: AbortSignal): Promise<SubmitReport>;
  /** Submit cleanup_deposit for the given source entries. */
  cleanupDeposits(indices: readonly number[], signal: AbortSignal): Promise<CleanupReport>;
}

/** Entries `start .. start + entries.length - 1` of a tracker; the window always ends at entry_count. */
export interface TrackerWindow<E> {
  header: TrackerHeader;
  start: number;
  entries: E[];
}

export interface BridgeView {
  authority: Base58;
  /** Source chain DepositTracker. */
  deposits: TrackerWindow<DepositEntry>;
  /** Destination chain WithdrawTracker. */
  withdrawals: TrackerWindow<WithdrawEntry>;
}

/** u64 amounts travel as decimal strings to keep votes JSON-safe. */
export type DepositResultWire =
  | { kind: 'Confirmed'; amount: string }
  | { kind: 'Rejected'; reason: Exclude<DepositResult, { kind: 'None' | 'Confirmed' }>['reason'] };

export interface AckDepositVote {
  index: number;
  approve: boolean;
  amount: string;
  recipient: Base58;
  sourceMint: Base58;
}

export interface AckWithdrawVote {
  index: number;
  approve: boolean;
  result: DepositResultWire;
}

export interface LandedTransaction {
  signature: string;
  /** The entry indices whose instructions this transaction carried. */
  indices: number[];
}

export interface SubmitReport {
  transactions: LandedTransaction[];
}

export interface CleanupReport {
  transactions: LandedTransaction[];
  /** Entries this server cleaned up. */
  completed: number[];
  /** Entries someone else had already cleaned up (CleanupAlreadyCompleted): done, not an error. */
  alreadyDone: number[];
}
