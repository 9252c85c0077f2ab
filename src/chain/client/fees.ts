import type { PublicKey, TransactionInstruction } from '@solana/web3.js';
import { LAMPORTS_PER_SIGNATURE } from '../fee-rate.js';
import { packBatches } from './batch.js';

/**
 * What submitting costs in fees. Every transaction the submitters build is signed by the
 * authority alone (it is the fee payer and the only signer), and pays no priority fee, so
 * one transaction costs one signature at the base rate.
 */

/** Lamports the instructions cost, packed in order into transactions as the submitters pack them. */
export function packedFees(instructions: readonly TransactionInstruction[], feePayer: PublicKey): number {
  return packBatches(instructions, feePayer).length * LAMPORTS_PER_SIGNATURE;
}
