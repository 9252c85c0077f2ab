import type { ChainSide } from '../../domain.js';
import type { Base58, DepositEntry, DepositResult, TrackerHeader, WithdrawEntry } from '../types.js';
import type { BridgeWatch } from './bridge-watch.js';

/**
 * The narrow interface the crank machine drives. Plain data in and out, so the machine and its
 * tests can run on an in-memory implementation. Votes and reports are JSON-safe (no bigint):
 * they travel through the machine's context.
 */
export interface BridgeChains {
  /** The authority this server signs for (base58). */
  readonly authority: Base58;
  /** Read both trackers: headers plus, from each position a planner starts at, at most `limits.entriesPerPosition` entries. */
  readState(signal: AbortSignal, limits: ReadLimits): Promise<BridgeView>;
  /** Submit ack_deposit votes on the destination, in order, batched into as few transactions as fit. */
  ackDeposits(votes: readonly AckDepositVote[], signal: AbortSignal): Promise<SubmitReport>;
  /** Submit ack_withdraw votes on the source, in order, batched. */
  ackWithdraws(votes: readonly AckWithdrawVote[], signal: AbortSignal): Promise<SubmitReport>;
  /** Submit cleanup_deposit for the given source entries. */
  cleanupDeposits(indices: readonly number[], signal: AbortSignal): Promise<CleanupReport>;
  /** The authority's fee balance on both chains, and the transactions its key signed since the previous call. */
  readAuthority(signal: AbortSignal): Promise<AuthorityView>;
  /** Lamports in fees the work would cost on each chain, packed into transactions as the submitters pack it. */
  plannedFees(work: PlannedWork): ChainAmounts;
  /** Checks the RPC endpoints do not allow right now (a capability, not a failure): /health lists them. */
  checksOff(): CheckOff[];
  /** RPC endpoints left out for their configuration (a node of another cluster), each naming its variable: /health is degraded while one is. */
  endpointProblems(): string[];
  /** The lifetime each chain's transactions are signed with (a durable nonce or a blockhash), as the last read of its nonce accounts found: /health names it (`landing_mode`). */
  lifetimeModes(): Record<ChainSide, LifetimeMode>;
  /** Transactions signed and sent whose outcome is not known yet (left pending by a cut attempt): a graceful stop keeps the lease while any is. */
  pendingTransactions(): number;
  /** The signing lease on the destination chain; absent: this client has none (every instance decides by the quiet window alone). */
  readonly lease?: SigningLease;
  /** Versions of this server's transactions that may still land, per chain: /health names it. */
  versionsInFlight(): Record<ChainSide, number>;
  /**
   * For shutdown: voids every nonce-mode transaction in flight (the crank advances its nonce
   * itself, docs/chain-client.md "Bounded in flight"), then waits for the outcome of every
   * transaction in flight, until `signal` aborts. After it resolves with `unresolved` 0 on both
   * chains, no transaction this process signed can land any more.
   */
  voidInFlight(signal: AbortSignal): Promise<Record<ChainSide, InFlightSettled>>;
  /** How each chain's transactions landed over the last ten minutes: /health and the crank page show it. */
  landingSummaries(): Record<ChainSide, LandingSummary>;
  /** The watchdog's reads (finalized, every endpoint; the program's deployment); absent: this client has none and no watchdog runs. */
  readonly watch?: BridgeWatch;
}

/** One chain's landing over the last ten minutes (src/chain/client/submit/send/landing-record.ts), in /health's words. */
export interface LandingSummary {
  /** Transactions whose outcome became known in the window. */
  transactions: number;
  landed: number;
  /** Landed as first signed, over `transactions`; null without any. */
  first_version_rate: number | null;
  /** Slots from first send to landed, nearest-rank p50 and p90 of the landed; null without any. */
  slots_p50: number | null;
  slots_p90: number | null;
  /** Versions signed per landed transaction, on average; null without any. */
  versions_per_landed: number | null;
}

/** What voiding and settling the transactions in flight found on one chain. */
export interface InFlightSettled {
  /** Nonce-mode transactions a void was signed for. */
  voided: number;
  /** Transactions one of whose versions landed (with an error or not) after all. */
  landed: number;
  /** Transactions still without an outcome when the wait ended (the signal aborted). */
  unresolved: number;
}

/**
 * The signing lease (docs/chain-client.md, "The lease"): a durable-nonce account of the
 * authority on the destination chain that exists while one instance holds it.
 */
export interface SigningLease {
  /** The lease account's address (base58). */
  readonly address: Base58;
  /** The account as one answer shows it, at or after `minContextSlot`. */
  read(signal: AbortSignal, minContextSlot?: number): Promise<LeaseObservation>;
  /**
   * Whether this instance still holds `value` after one read showed `seen` (another value, or
   * none): `lost` only on proof (two endpoints agreeing, or another instance's verified
   * transaction moving the lease from `value`); anything less is a doubt.
   */
  check(value: string, seen: LeaseObservation, signal: AbortSignal): Promise<LeaseCheck>;
  /** Takes the lease as `seen` shows it: a free one, or over a held one's value (which must still be there). */
  take(seen: LeaseObservation, signal: AbortSignal): Promise<LeaseTaking>;
  /** Closes the lease this instance holds (its `value`), returning the rent. */
  release(value: string, signal: AbortSignal): Promise<LeaseRelease>;
}

/** One read of the lease account at `slot`: free (no account, or no data), held (the nonce `value` marks the holder), or unusable and why. */
export type LeaseObservation = (
  | { state: 'free'; lamports: number }
  | { state: 'held'; value: string; lamports: number }
  | { state: 'unusable'; reason: string }
) & { slot: number };

export type LeaseTaking = { taken: true; value: string; slot: number; signature: string } | { taken: false; seen: LeaseObservation; why: string };

export type LeaseCheck = { kind: 'lost'; seen: LeaseObservation; proof: string } | { kind: 'doubt'; why: string };

/** `advance`: the first step, binding the release to the value held; `signature`: the withdrawal that closed the lease. */
export type LeaseRelease = { released: true; advance: string; signature: string; slot: number } | { released: false; why: string };

/**
 * `nonce`: every transaction is signed against one of the authority's durable nonces, so at
 * most one version of a vote can land; `blockhash`: against a recent blockhash (no nonce
 * accounts on that chain), each version valid until its blockhash expires.
 */
export type LifetimeMode = 'nonce' | 'blockhash';

/** A check the server cannot make on one chain, and why. */
export interface CheckOff {
  /** `second_signer`: no endpoint of the chain keeps transaction history. */
  check: 'second_signer';
  chain: ChainSide;
  reason: string;
}

/** Lamports per chain. */
export type ChainAmounts = Record<ChainSide, number>;

/** A landed transaction signed by the authority key. */
export interface AuthorityTransaction {
  signature: string;
  slot: number;
  /** This process signed it; false: someone else holds the key (a second signer), proven (docs/chain-client.md, "Who signs: proof, not reports"). */
  signedHere: boolean;
  /** The move of this authority's nonce it made, when the pool's reads saw it. */
  nonceMove?: NonceMove;
}

/**
 * A nonce of this authority's pool that moved from `from` to `to` (seen at `slot`) with no
 * transaction of this process landing, proven by the transaction that moved it (found in the
 * key's history and verified): the key signed a transaction elsewhere (docs/chain-client.md,
 * "Who signs, from the nonces").
 */
export interface NonceMove {
  account: Base58;
  from: string;
  to: string;
  slot: number;
}

export interface AuthorityChainView {
  /** Lamports the authority (the fee payer) holds, at confirmed. */
  balance: number;
  /** Landed since the previous readAuthority, newest first; the first call reports none (docs/chain-client.md). */
  transactions: AuthorityTransaction[];
  /**
   * True when the history's bounds left entries since the previous read unchecked: whether
   * another key signed among them is unknown (never "no other signer"), so a standby does not
   * count the read as quiet. Absent: every entry was checked.
   */
  historyIncomplete?: boolean;
  /** Nonce moves of another signer two endpoints corroborated, without a transaction of the history (yet); absent: none. */
  nonceMoves?: NonceMove[];
}

export type AuthorityView = Record<ChainSide, AuthorityChainView>;

/** What one cycle would submit, for plannedFees. */
export interface PlannedWork {
  ackDeposits: readonly AckDepositVote[];
  ackWithdraws: readonly AckWithdrawVote[];
  cleanups: readonly number[];
}

/**
 * How much of each tracker one read fetches: the planners say what they can act on, so that a
 * cycle's read never grows with a number a header claims (docs/crank.md "What the planners read").
 */
export interface ReadLimits {
  /** Entries read from each position a planner starts at (own next_index on both trackers, settled_prefix). */
  entriesPerPosition: number;
}

/**
 * A tracker's header and the entries one read fetched, by index in ascending order: runs of at
 * most ReadLimits.entriesPerPosition entries from each planner position, below entry_count.
 * Entries outside those runs were not read.
 */
export interface TrackerWindow<E> {
  header: TrackerHeader;
  entries: ReadonlyMap<number, E>;
}

export interface BridgeView {
  authority: Base58;
  /** Source chain DepositTracker. */
  deposits: TrackerWindow<DepositEntry>;
  /** Destination chain WithdrawTracker. */
  withdrawals: TrackerWindow<WithdrawEntry>;
  /**
   * The slot each chain's node answered this view's header reads at (the newest of them): the
   * "now" that entry slots (deposit_slot, finalized_slot) are aged against.
   */
  slots: Record<ChainSide, number>;
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

/**
 * How long the calls behind BridgeChains take at most, as values the chain client supplies
 * (src/chain/client/chain-bounds.ts computes them from the settings and the client's own constants,
 * each imported from where it is enforced). The crank's bounds (src/machines/delays.ts) are made
 * of these numbers, never of the client's internals.
 */
export interface ChainBounds {
  /** One cycle's reads: readState then readAuthority, each round of read calls with all its tries. */
  cycleReadMs: number;
  /** One signed transaction's life: its budget reads, its first send, the confirmation wait, one last wait round. */
  transactionLifeMs: number;
}
