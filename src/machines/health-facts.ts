import type { NonceMove } from '../chain/bridge-chains.js';
import type { ChainSide } from '../domain.js';
import type { CrankRole } from './crank-types.js';

/** What /health shows (times in unix milliseconds here; the service converts to seconds). */
export interface HealthFacts {
  lastRunAtMs: number | null;
  lastSuccessAtMs: number | null;
  lastError: string | null;
  lastAction: string | null;
  /** Transactions signed by this authority that landed (SPEC total_actions_submitted). */
  transactionsLanded: number;
  lastCycleFinishedAtMs: number | null;
  /** Per chain at the latest read: the authority's balance and the fees the plan needed. */
  fees: ChainFees | null;
  /** The latest transaction signed by this authority's key that this process did not sign, while it was active. */
  foreignSigner: ForeignTransaction | null;
  /** Active or standby, and the other signer a standby watches (rules.ts). */
  role: RoleFacts;
}

interface FeeFacts {
  balance: number;
  need: number;
}

export type ChainFees = Record<ChainSide, FeeFacts>;

export interface ForeignTransaction extends KeyUse {
  seenAtMs: number;
}

/** The other instance a standby watches: its latest transaction and since when it has been seen signing. */
export interface OtherSigner extends KeyUse {
  /** The read that first saw it signing in this standby stretch. */
  activeSinceMs: number;
  /** The latest read that saw a new transaction of it. */
  lastSeenAtMs: number;
}

export interface RoleFacts {
  role: CrankRole;
  /** When this role began; null before the first read. */
  sinceMs: number | null;
  /** The latest read that saw another signer, or the first read: the quiet window runs from here. */
  quietSinceMs: number | null;
  /**
   * Added to the quiet window after this instance stood by on seeing another signer while it was
   * active: uniform in [0, window), so that two instances that stood by on each other's
   * transactions do not take over in the same instant again. 0 otherwise.
   */
  extraQuietMs: number;
  otherSigner: OtherSigner | null;
}

/**
 * A transaction signed with the key but not by this process, as a read reports it: the
 * destination chain's first, each chain's newest first (slots of two chains do not compare).
 * Seen in the history (its signature) or as a nonce of the pool that moved (the nonce; the
 * transaction itself is not known).
 */
export interface KeyUse {
  chain: ChainSide;
  signature?: string;
  slot: number;
  nonceMove?: NonceMove;
}
