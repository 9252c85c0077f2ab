/**
 * Decoded records of the bridge program (PROTOCOL.md "Accounts"). u64 fields are `bigint`;
 * 32-byte keys and addresses are base58 strings so that records compare with `===` and log
 * readably. These types carry no behaviour: codecs live in ./codec, reads in ./client.
 */

/** A base58-encoded 32-byte value (Pubkey, or the destination `recipient` bytes). */
export type Base58 = string;

export type RejectionReason = 'InternalError' | 'InsufficientFunds' | 'LimitExceeded' | 'TokenPairFrozen' | 'TokenPairNotFound';

export type DepositResult = { kind: 'None' } | { kind: 'Confirmed'; amount: bigint } | { kind: 'Rejected'; reason: RejectionReason };

export type DepositStatus = 'Initialized' | 'Relaying' | 'Finalized';
export type WithdrawStatus = 'Empty' | 'Voting' | 'Finalized';
export type CreatedTokenAccount = 'Pending' | 'Created' | 'NotRequired';
export type LastVote = 'None' | 'Yes' | 'No';

export interface AuthorityVote {
  /** The next entry this authority must vote on (rule 3.4). */
  nextIndex: bigint;
  lastVote: LastVote;
}

export type TrackerKind = 'DepositTracker' | 'WithdrawTracker';

export interface TrackerHeader {
  kind: TrackerKind;
  sourceChainId: number;
  targetChainId: number;
  threshold: number;
  authorityCount: number;
  entryCount: bigint;
  capacity: bigint;
  /** DepositTracker: every entry below is cleaned up. WithdrawTracker: every entry below is Finalized. */
  settledPrefix: bigint;
  /** +1 at each governance reset. */
  generation: bigint;
  governance: Base58;
  /** The first `authorityCount` authorities (unused slots are not listed). */
  authorities: Base58[];
  /** Aligned with `authorities`. */
  votes: AuthorityVote[];
}

export interface DepositEntry {
  amount: bigint;
  depositor: Base58;
  recipient: Base58;
  sourceMint: Base58;
  status: DepositStatus;
  cleanupCompleted: boolean;
  yesVotes: number;
  noVotes: number;
  proposed: DepositResult;
  result: DepositResult;
  refundedAmount: bigint;
  depositSlot: bigint;
}

export interface WithdrawEntry {
  status: WithdrawStatus;
  createdTokenAccount: CreatedTokenAccount;
  yesVotes: number;
  noVotes: number;
  amount: bigint;
  recipient: Base58;
  sourceMint: Base58;
  result: DepositResult;
  tokenAccount: Base58;
  finalizedSlot: bigint;
}

export interface TokenPair {
  sourceChainId: number;
  sourceMint: Base58;
  targetMint: Base58;
  frozen: boolean;
  limitRemaining: bigint;
  vaultBalance: bigint;
}
