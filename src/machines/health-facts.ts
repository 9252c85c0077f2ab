import type { ChainSide } from '../domain.js';
import type { KeyUse, RoleFacts } from './authority-role.js';

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
  /** Active or standby, and the other signer a standby watches (authority-role.ts). */
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
