import type { PublicKey, TransactionInstruction } from '@solana/web3.js';
import { LAMPORTS_PER_SIGNATURE, priorityFeeLamports } from '../../../fee-rate.js';
import { packBatches } from './batch.js';
import { BUDGET_SIZE_PREFIX, MAX_COMPUTE_UNIT_LIMIT } from '../../budget/compute-budget.js';

/**
 * What submitting costs in fees, before anything is signed. Every transaction the submitters
 * build is signed by the authority alone (one signature at the base rate), pays a priority
 * fee of at most the cap x its limit, and, with BRIDGE_*_TIP_LAMPORTS, the tip on top (../../budget/tip.ts). The limit is measured only when a batch is signed, so it
 * is bounded here by what the signing bounds it by: the action's compute ceiling per
 * instruction (`ComputeCeilings`, ../../budget/compute-budget.ts: the runtime's 200,000 until the chain
 * showed what the instructions cost) times the batch's instructions, at most
 * MAX_COMPUTE_UNIT_LIMIT. Transactions are counted as the bytes pack them; a batch the program
 * meters past the limit is split further when signed.
 */

/**
 * Lamports the instructions cost at most, packed in order into transactions as the submitters
 * pack them: behind `leading` (AdvanceNonceAccount in nonce mode) and the budget instructions,
 * each transaction's limit at most `unitsPerInstruction` (the action's ceiling) per instruction.
 */
export function packedFees(
  instructions: readonly TransactionInstruction[],
  feePayer: PublicKey,
  price: { capMicroLamports: number; unitsPerInstruction: number; tipLamports: number },
  leading: readonly TransactionInstruction[] = [],
): number {
  return packBatches(instructions, feePayer, undefined, [...leading, ...BUDGET_SIZE_PREFIX]).reduce(
    (sum, batch) =>
      sum +
      LAMPORTS_PER_SIGNATURE +
      priorityFeeLamports(price.capMicroLamports, Math.min(MAX_COMPUTE_UNIT_LIMIT, batch.length * price.unitsPerInstruction)) +
      price.tipLamports,
    0,
  );
}
