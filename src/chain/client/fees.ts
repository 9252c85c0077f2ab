import type { PublicKey, TransactionInstruction } from '@solana/web3.js';
import { DEFAULT_UNITS_PER_INSTRUCTION, LAMPORTS_PER_SIGNATURE, priorityFeeLamports } from '../fee-rate.js';
import { packBatches } from './batch.js';
import { BUDGET_SIZE_PREFIX, MAX_COMPUTE_UNIT_LIMIT } from './compute-budget.js';

/**
 * What submitting costs in fees, before anything is signed. Every transaction the submitters
 * build is signed by the authority alone (one signature at the base rate) and pays a priority
 * fee of at most the cap x its limit. The limit is measured only when a batch is signed, so it
 * is bounded here by the chain's default reservation, DEFAULT_UNITS_PER_INSTRUCTION per
 * instruction (at most MAX_COMPUTE_UNIT_LIMIT), which a measured limit stays below while an
 * instruction costs less than that. Transactions are counted as the bytes pack them; a batch the
 * program meters past the limit is split further when signed.
 */

/**
 * Lamports the instructions cost at most, packed in order into transactions as the submitters
 * pack them: behind `leading` (AdvanceNonceAccount in nonce mode) and the budget instructions.
 */
export function packedFees(
  instructions: readonly TransactionInstruction[],
  feePayer: PublicKey,
  capMicroLamports: number,
  leading: readonly TransactionInstruction[] = [],
): number {
  return packBatches(instructions, feePayer, undefined, [...leading, ...BUDGET_SIZE_PREFIX]).reduce(
    (sum, batch) => sum + LAMPORTS_PER_SIGNATURE + priorityFeeLamports(capMicroLamports, Math.min(MAX_COMPUTE_UNIT_LIMIT, batch.length * DEFAULT_UNITS_PER_INSTRUCTION)),
    0,
  );
}
