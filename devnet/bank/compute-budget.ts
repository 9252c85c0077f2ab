import { ComputeBudgetProgram } from '@solana/web3.js';
import { MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES } from '../../src/chain/codec/compute-budget.js';
import { SYSTEM_PROGRAM_ID } from '../program/store.js';
import type { TransactionError } from './transaction-error.js';

/**
 * A transaction's compute budget, read from its ComputeBudget instructions as Agave's
 * ComputeBudgetInstructionDetails reads them (PROTOCOL.md "Compute units and fees"), and the fee
 * it pays. Instruction data is borsh: a u8 variant, then its field; trailing bytes are ignored.
 * A duplicate or unreadable budget instruction fails sanitization (the caller reports it as an
 * invalid transaction); a heap frame out of range or a zero data-size limit is refused later,
 * before any fee, as `error`.
 */

export const COMPUTE_BUDGET_PROGRAM_ID = ComputeBudgetProgram.programId.toBase58();
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;
export const LAMPORTS_PER_SIGNATURE = 5_000;
const DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT = 200_000;
export const MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT = 3_000;
const MICRO_LAMPORTS_PER_LAMPORT = 1_000_000n;
const MIN_HEAP_FRAME_BYTES = 32 * 1024;
const MAX_HEAP_FRAME_BYTES = 256 * 1024;
/**
 * The runtime's builtins among the programs the devnet knows, with the name the native loader
 * gives each one's account; every other program is metered as a program.
 */
export const BUILTIN_PROGRAMS: ReadonlyArray<{ id: string; loaderName: string }> = [
  { id: SYSTEM_PROGRAM_ID, loaderName: 'system_program' },
  { id: COMPUTE_BUDGET_PROGRAM_ID, loaderName: 'compute_budget_program' },
];
const BUILTIN_PROGRAM_IDS = new Set(BUILTIN_PROGRAMS.map(({ id }) => id));

export interface ComputeBudget {
  /** Compute units the transaction may consume: requested (at most 1,400,000) or the default. */
  unitLimit: number;
  /** SetComputeUnitPrice, micro-lamports per compute unit; 0 without it. */
  unitPrice: bigint;
  /** SetLoadedAccountsDataSizeLimit (bytes, clamped to 64 MiB), or 64 MiB without it. */
  loadedAccountsBytes: number;
  /** A budget request the runtime refuses before charging anything. */
  error?: TransactionError;
}

export interface Fee {
  /** 5,000 lamports per signature. */
  base: bigint;
  /** ceil(unitPrice × unitLimit / 1,000,000): paid on the limit requested, not on what was used. */
  priority: bigint;
  total: bigint;
}

/** Thrown for a budget instruction a cluster refuses at sanitization; the message is Agave's. */
export class ComputeBudgetSanitizeError extends Error {
  override readonly name = 'ComputeBudgetSanitizeError';
}

interface BudgetInstruction {
  programId: string;
  data: Uint8Array;
}

interface Requests {
  limit?: number;
  price?: bigint;
  heap?: { index: number; bytes: number };
  loadedAccountsBytes?: number;
}

export function readComputeBudget(instructions: readonly BudgetInstruction[]): ComputeBudget {
  const requests: Requests = {};
  for (const [index, ix] of instructions.entries()) {
    if (ix.programId === COMPUTE_BUDGET_PROGRAM_ID) readRequest(requests, index, ix.data);
  }
  const unitLimit = Math.min(requests.limit ?? defaultUnitLimit(instructions), MAX_COMPUTE_UNIT_LIMIT);
  const loadedAccountsBytes = Math.min(requests.loadedAccountsBytes ?? MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES, MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES);
  const budget: ComputeBudget = { unitLimit, unitPrice: requests.price ?? 0n, loadedAccountsBytes };
  const error = refusedRequest(requests);
  return error === undefined ? budget : { ...budget, error };
}

export function feeOf(signatures: number, budget: ComputeBudget): Fee {
  const base = BigInt(signatures * LAMPORTS_PER_SIGNATURE);
  const microLamports = budget.unitPrice * BigInt(budget.unitLimit);
  const priority = (microLamports + MICRO_LAMPORTS_PER_LAMPORT - 1n) / MICRO_LAMPORTS_PER_LAMPORT;
  return { base, priority, total: base + priority };
}

function defaultUnitLimit(instructions: readonly BudgetInstruction[]): number {
  return instructions.reduce(
    (sum, ix) => sum + (BUILTIN_PROGRAM_IDS.has(ix.programId) ? MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT : DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT),
    0,
  );
}

function readRequest(requests: Requests, index: number, data: Uint8Array): void {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const field = (bytes: 4 | 8): number | bigint => {
    if (data.length < 1 + bytes) throw invalidData(index);
    return bytes === 4 ? view.getUint32(1, true) : view.getBigUint64(1, true);
  };
  const once = <K extends keyof Requests>(key: K, value: Requests[K]): void => {
    if (requests[key] !== undefined)
      throw new ComputeBudgetSanitizeError(`Transaction contains a duplicate instruction (${index}) that is not allowed`);
    requests[key] = value;
  };
  switch (data[0]) {
    case 1:
      return once('heap', { index, bytes: field(4) as number });
    case 2:
      return once('limit', field(4) as number);
    case 3:
      return once('price', field(8) as bigint);
    case 4:
      return once('loadedAccountsBytes', field(4) as number);
    default:
      // Variant 0 (the removed RequestUnits), an unknown variant, or no data.
      throw invalidData(index);
  }
}

function refusedRequest(requests: Requests): TransactionError | undefined {
  const { heap } = requests;
  if (heap !== undefined && (heap.bytes < MIN_HEAP_FRAME_BYTES || heap.bytes > MAX_HEAP_FRAME_BYTES || heap.bytes % 1024 !== 0)) {
    return { InstructionError: [heap.index, 'InvalidInstructionData'] };
  }
  if (requests.loadedAccountsBytes === 0) return 'InvalidLoadedAccountsDataSizeLimit';
  return undefined;
}

function invalidData(index: number): ComputeBudgetSanitizeError {
  return new ComputeBudgetSanitizeError(`Error processing Instruction ${index}: invalid instruction data`);
}
