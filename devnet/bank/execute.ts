import { ComputeBudgetProgram, type PublicKey } from '@solana/web3.js';
import { describeError } from '../../src/errors.js';
import type { InstructionAccount, InstructionContext } from '../program/context.js';
import { isProgramError } from '../program/errors.js';
import { executeBridgeInstruction } from '../program/program.js';
import { SYSTEM_PROGRAM_ID, type AccountStore } from '../program/store.js';
import { executeSystemInstruction } from './system-program.js';
import type { CompiledInstruction, DevnetTransaction } from './transaction.js';
import { describeInstructionError, type InstructionErrorDetail, type TransactionError } from './transaction-error.js';

/**
 * Runs a transaction's instructions in order against `store` and stops at the first failure;
 * the caller commits or rolls back. Logs follow the runtime's format so tools that parse
 * `Program <id> invoke [1]` ... `failed: custom program error: 0x...` read them unchanged.
 * Compute units are a fixed model (the devnet does not meter), reported in logs and simulations.
 */

const COMPUTE_BUDGET_PROGRAM_ID = ComputeBudgetProgram.programId.toBase58();
const COMPUTE_BUDGET_UNITS = 150;
const SYSTEM_UNITS = 150;
const BRIDGE_INSTRUCTION_UNITS = 5_000;
const DEFAULT_UNIT_LIMIT = 200_000;

export interface ExecutionEnv {
  programId: PublicKey;
  chainId: number;
  slot: number;
}

export interface ExecutionResult {
  err: TransactionError | null;
  logs: string[];
  unitsConsumed: number;
}

export function executeInstructions(store: AccountStore, tx: DevnetTransaction, env: ExecutionEnv): ExecutionResult {
  const logs: string[] = [];
  let unitsConsumed = 0;
  const bridgeProgramId = env.programId.toBase58();
  for (const [index, ix] of tx.instructions.entries()) {
    const programId = tx.accountKeys[ix.programIdIndex]!;
    logs.push(`Program ${programId} invoke [1]`);
    if (programId === COMPUTE_BUDGET_PROGRAM_ID) {
      unitsConsumed += COMPUTE_BUDGET_UNITS;
      logs.push(`Program ${programId} success`);
      continue;
    }
    if (programId === SYSTEM_PROGRAM_ID) {
      unitsConsumed += SYSTEM_UNITS;
      const accounts = ix.accountIndexes.map((key) => instructionAccount(tx, key));
      const detail = executeSystemInstruction(store, accounts, ix.data, (line) => logs.push(line));
      if (detail !== undefined) return failed(logs, unitsConsumed, programId, index, detail);
      logs.push(`Program ${programId} success`);
      continue;
    }
    if (programId !== bridgeProgramId) return failed(logs, unitsConsumed, programId, index, 'UnsupportedProgramId');
    unitsConsumed += BRIDGE_INSTRUCTION_UNITS;
    const detail = runBridgeInstruction(store, tx, ix, env, logs);
    logs.push(`Program ${programId} consumed ${BRIDGE_INSTRUCTION_UNITS} of ${DEFAULT_UNIT_LIMIT} compute units`);
    if (detail !== undefined) return failed(logs, unitsConsumed, programId, index, detail);
    logs.push(`Program ${programId} success`);
  }
  return { err: null, logs, unitsConsumed };
}

function runBridgeInstruction(
  store: AccountStore,
  tx: DevnetTransaction,
  ix: CompiledInstruction,
  env: ExecutionEnv,
  logs: string[],
): InstructionErrorDetail | undefined {
  const ctx: InstructionContext = {
    programId: env.programId,
    chainId: env.chainId,
    slot: BigInt(env.slot),
    accounts: ix.accountIndexes.map((key) => instructionAccount(tx, key)),
    store,
    log: (message) => logs.push(message),
  };
  try {
    executeBridgeInstruction(ctx, ix.data);
    return undefined;
  } catch (err) {
    if (isProgramError(err)) {
      logs.push(`Program log: AnchorError occurred. Error Code: ${err.errorName}. Error Number: ${err.code}. Error Message: ${err.message}.`);
      return { Custom: err.code };
    }
    // A bug in the model, not a protocol outcome: fail the transaction and say why in its logs.
    logs.push(`Program log: panicked: ${describeError(err)}`);
    return 'ProgramFailedToComplete';
  }
}

function instructionAccount(tx: DevnetTransaction, key: number): InstructionAccount {
  return { address: tx.accountKeys[key]!, isSigner: key < tx.signerCount, isWritable: tx.writable[key]! };
}

function failed(
  logs: string[],
  unitsConsumed: number,
  programId: string,
  index: number,
  detail: InstructionErrorDetail,
): ExecutionResult {
  logs.push(`Program ${programId} failed: ${describeInstructionError(detail)}`);
  return { err: { InstructionError: [index, detail] }, logs, unitsConsumed };
}
