import { ComputeBudgetProgram, PublicKey, Transaction, type TransactionInstruction } from '@solana/web3.js';
import { runtimeInstructionError } from '../program-errors.js';
import type { ChainRpc } from '../rpc/chain-rpc.js';

/**
 * The compute budget of a crank transaction (PROTOCOL.md "Compute units and fees"). Every crank
 * transaction starts with SetComputeUnitLimit and SetComputeUnitPrice. The limit is measured,
 * never assumed (a program upgrade changes what an instruction costs): the exact instructions
 * are simulated under the largest limit, and the limit is what they consumed plus
 * COMPUTE_UNIT_MARGIN. A batch that does not fit is cut to what does and the rest goes in the
 * next transaction; the priority part of the fee is paid on the requested limit, so a measured
 * limit costs a fraction of the default reservation (200,000 CU per instruction).
 */

/** The largest limit a transaction may request; a larger request is clamped by the runtime. */
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;

/**
 * Added to the simulated units: the state can change between the simulation and the landing
 * (another vote, a finalization), and an instruction's path with it. 15 % keeps a request within
 * 1.15x of its use (the issue asks at most about 1.2x) while leaving room for a branch that
 * costs more than the simulated one.
 */
export const COMPUTE_UNIT_MARGIN = 0.15;

/** SetComputeUnitLimit and SetComputeUnitPrice lead every crank transaction. */
export const BUDGET_INSTRUCTION_COUNT = 2;

// Any blockhash does: the node replaces it (replaceRecentBlockhash) before it simulates.
const SIMULATION_BLOCKHASH = PublicKey.default.toBase58();

export interface ComputeBudget {
  /** SetComputeUnitLimit: the units requested. */
  unitLimit: number;
  /** SetComputeUnitPrice: micro-lamports per CU. */
  microLamportsPerUnit: number;
  /** What the simulation of these instructions consumed. */
  unitsConsumed: number;
}

/** The two instructions that lead a transaction with this budget. */
export function budgetInstructions(budget: Pick<ComputeBudget, 'unitLimit' | 'microLamportsPerUnit'>): TransactionInstruction[] {
  return [
    ComputeBudgetProgram.setComputeUnitLimit({ units: budget.unitLimit }),
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports: budget.microLamportsPerUnit }),
  ];
}

/** The budget instructions as the byte count sees them: their size does not depend on their values. */
export const BUDGET_SIZE_PREFIX: readonly TransactionInstruction[] = budgetInstructions({ unitLimit: 0, microLamportsPerUnit: 0 });

/** The limit to request for instructions that consumed `unitsConsumed`. */
function unitLimitFor(unitsConsumed: number): number {
  return Math.min(MAX_COMPUTE_UNIT_LIMIT, Math.ceil(unitsConsumed * (1 + COMPUTE_UNIT_MARGIN)));
}

/**
 * The position among `instructions` (after the budget instructions) of the one that passed the
 * limit, when `err` is `{"InstructionError":[i,"ComputationalBudgetExceeded"]}`.
 */
function budgetExceededAt(err: unknown): number | undefined {
  const instructionError = runtimeInstructionError(err);
  if (instructionError === undefined || instructionError[1] !== 'ComputationalBudgetExceeded') return undefined;
  return Math.max(0, instructionError[0] - BUDGET_INSTRUCTION_COUNT);
}

export interface MeasuredBatch {
  /** How many of the leading instructions go in this transaction (at least 1). */
  count: number;
  budget: ComputeBudget;
}

export interface MeasureInput {
  rpc: ChainRpc;
  feePayer: PublicKey;
  /** Instructions that fit one transaction by bytes, in order. */
  instructions: readonly TransactionInstruction[];
  microLamportsPerUnit: number;
  /** Take at most this many (a send that met ComputationalBudgetExceeded halves it). */
  maxCount?: number;
}

/** Most simulations one transaction's measurement makes (the attempt's deadline counts them). */
export const MAX_SIMULATIONS = 4;

/**
 * How many of the leading instructions fit one transaction's compute, and its budget. Each
 * simulation either fits or cuts the batch (to the instruction that passed the limit, or in
 * proportion to the overshoot): in practice one simulation, or two when the batch is cut, and
 * never more than MAX_SIMULATIONS; past them one instruction goes under the largest limit. One
 * instruction that alone passes the largest limit goes as it is: its send fails
 * ComputationalBudgetExceeded, which the failure policy tries again (an upgrade may be rolling out).
 */
export async function measureBatch(input: MeasureInput, signal: AbortSignal): Promise<MeasuredBatch> {
  const { rpc, feePayer, instructions, microLamportsPerUnit } = input;
  let count = Math.min(instructions.length, input.maxCount ?? instructions.length);
  for (let simulations = 0; simulations < MAX_SIMULATIONS; simulations++) {
    const probe = [...budgetInstructions({ unitLimit: MAX_COMPUTE_UNIT_LIMIT, microLamportsPerUnit }), ...instructions.slice(0, count)];
    const { err, unitsConsumed } = await rpc.simulateTransaction(unsignedWire(probe, feePayer), signal);
    const exceededAt = budgetExceededAt(err);
    const wanted = unitsConsumed * (1 + COMPUTE_UNIT_MARGIN);
    if (exceededAt === undefined && (wanted <= MAX_COMPUTE_UNIT_LIMIT || count === 1)) {
      return { count, budget: { unitLimit: unitLimitFor(unitsConsumed), microLamportsPerUnit, unitsConsumed } };
    }
    if (count === 1) break;
    const fits = exceededAt ?? Math.floor((count * MAX_COMPUTE_UNIT_LIMIT) / wanted);
    count = Math.max(1, Math.min(count - 1, fits));
  }
  return { count: 1, budget: { unitLimit: MAX_COMPUTE_UNIT_LIMIT, microLamportsPerUnit, unitsConsumed: MAX_COMPUTE_UNIT_LIMIT } };
}

function unsignedWire(instructions: readonly TransactionInstruction[], feePayer: PublicKey): Uint8Array {
  const transaction = new Transaction({ feePayer, blockhash: SIMULATION_BLOCKHASH, lastValidBlockHeight: 0 }).add(...instructions);
  return transaction.serialize({ requireAllSignatures: false, verifySignatures: false });
}
