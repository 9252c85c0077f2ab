import { PublicKey, SystemProgram, type TransactionInstruction } from '@solana/web3.js';
import { priorityFeeLamports } from '../../fee-rate.js';
import type { ComputeBudget } from './compute-budget.js';

/**
 * A tip for a send-only path that requires one (BRIDGE_*_TIP_LAMPORTS to BRIDGE_*_TIP_ACCOUNT;
 * docs/chain-client.md, "Send-only paths"): a System transfer from the authority inside every
 * transaction of the chain, so that it is paid only when the transaction lands, and never
 * without it. It leads the action's instructions (after AdvanceNonceAccount, which must be
 * first), so the simulation that sizes the batch runs it and an error's position counts it.
 *
 * It is counted within what the cap allows a transaction above its signature fee,
 * ceil(cap x limit / 10^6) lamports: the price is lowered so that priority fee plus tip stays
 * within it (`priceWithTip`). A tip larger than a small transaction's share leaves it a price
 * of 0; the configuration refuses one larger than a full transaction's (src/config/landing.ts).
 */

export interface TipSettings {
  account: string;
  lamports: number;
  /** BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS. */
  capMicroLamports: number;
}

export function tipInstruction(authority: PublicKey, tip: TipSettings): TransactionInstruction {
  return SystemProgram.transfer({ fromPubkey: authority, toPubkey: new PublicKey(tip.account), lamports: tip.lamports });
}

/** `budget` with its price lowered so that its priority fee and the tip fit what the cap allows for its limit. */
export function priceWithTip(budget: ComputeBudget, tip: TipSettings | undefined): ComputeBudget {
  if (tip === undefined || budget.unitLimit === 0) return budget;
  const allowed = priorityFeeLamports(tip.capMicroLamports, budget.unitLimit) - tip.lamports;
  const most = Math.max(0, Math.floor((allowed * 1_000_000) / budget.unitLimit));
  return most >= budget.microLamportsPerUnit ? budget : { ...budget, microLamportsPerUnit: most };
}
