import type { PublicKey } from '@solana/web3.js';
import { describeError } from '../../src/errors.js';
import type { InstructionAccount, InstructionContext } from '../program/context.js';
import { isProgramError } from '../program/errors.js';
import { executeBridgeInstruction } from '../program/program.js';
import type { AccountStore } from '../program/store.js';
import { COMPUTE_BUDGET_PROGRAM_ID } from './compute-budget.js';
import { BUILTIN_INSTRUCTION_UNITS, type ComputeCosts } from './compute-costs.js';
import { executeSystemInstruction } from './system-program.js';
import type { CompiledInstruction, DevnetTransaction } from './transaction.js';
import { describeInstructionError, type InstructionErrorDetail, type TransactionError } from './transaction-error.js';

/**
 * Runs a transaction's instructions in order against `store`, metered against its compute-unit
 * limit, and stops at the first failure; the caller commits or rolls back. Each instruction
 * consumes its cost (compute-costs.ts) whether it succeeds or fails; the one that would pass
 * the limit fails with ComputationalBudgetExceeded and, as in Agave, leaves the meter empty.
 * Logs follow the runtime's format: builtins log invoke and success/failure, the bridge program
 * also `consumed X of Y compute units` (Y: what remained when it started).
 */

export interface ExecutionEnv {
  programId: PublicKey;
  /** `programId` in base58, as instructions name their program. */
  programAddress: string;
  chainId: number;
  slot: number;
  /** The latest blockhash: a nonce initialized or advanced now takes its value from it. */
  blockhash: string;
  costs: ComputeCosts;
}

export interface ExecutionResult {
  err: TransactionError | null;
  logs: string[];
  unitsConsumed: number;
}

interface Run {
  tx: DevnetTransaction;
  store: AccountStore;
  env: ExecutionEnv;
  logs: string[];
  consumed: number;
}

export function executeInstructions(store: AccountStore, tx: DevnetTransaction, env: ExecutionEnv): ExecutionResult {
  const run: Run = { tx, store, env, logs: [], consumed: 0 };
  for (const [index, ix] of tx.instructions.entries()) {
    const programId = tx.accountKeys[ix.programIdIndex]!;
    run.logs.push(`Program ${programId} invoke [1]`);
    const detail = executeInstruction(run, programId, ix);
    if (detail !== undefined) {
      return { err: { InstructionError: [index, detail] }, logs: run.logs, unitsConsumed: run.consumed };
    }
    run.logs.push(`Program ${programId} success`);
  }
  return { err: null, logs: run.logs, unitsConsumed: run.consumed };
}

function executeInstruction(run: Run, programId: string, ix: CompiledInstruction): InstructionErrorDetail | undefined {
  if (programId === run.env.programAddress) return meteredBridgeInstruction(run, programId, ix);
  // Any other program is a builtin (compute-budget.ts BUILTIN_PROGRAMS): the bank refused every
  // program that is not an executable account before the fee, and those are the only others.
  // A builtin charges its cost before it runs (consume_checked); the budget program then does nothing.
  if (remaining(run) < BUILTIN_INSTRUCTION_UNITS) return exhausted(run, programId, describeInstructionError('ComputationalBudgetExceeded'));
  run.consumed += BUILTIN_INSTRUCTION_UNITS;
  if (programId === COMPUTE_BUDGET_PROGRAM_ID) return undefined;
  const accounts = ix.accountIndexes.map((key) => instructionAccount(run.tx, key));
  const detail = executeSystemInstruction({
    store: run.store,
    accounts,
    data: ix.data,
    blockhash: run.env.blockhash,
    log: (line) => run.logs.push(line),
  });
  return detail === undefined ? undefined : failed(run, programId, detail);
}

function meteredBridgeInstruction(run: Run, programId: string, ix: CompiledInstruction): InstructionErrorDetail | undefined {
  const available = remaining(run);
  const cost = run.env.costs.bridgeInstruction(ix.data);
  if (cost > available) {
    run.logs.push(`Program ${programId} consumed ${available} of ${available} compute units`);
    return exhausted(run, programId, 'exceeded CUs meter at BPF instruction');
  }
  const detail = runBridgeInstruction(run, ix);
  run.consumed += cost;
  run.logs.push(`Program ${programId} consumed ${cost} of ${available} compute units`);
  return detail === undefined ? undefined : failed(run, programId, detail);
}

function runBridgeInstruction(run: Run, ix: CompiledInstruction): InstructionErrorDetail | undefined {
  const { env, logs } = run;
  const ctx: InstructionContext = {
    programId: env.programId,
    chainId: env.chainId,
    slot: BigInt(env.slot),
    accounts: ix.accountIndexes.map((key) => instructionAccount(run.tx, key)),
    store: run.store,
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

function remaining(run: Run): number {
  return run.tx.budget.unitLimit - run.consumed;
}

/** The meter runs dry: everything left is consumed. */
function exhausted(run: Run, programId: string, reason: string): InstructionErrorDetail {
  run.consumed = run.tx.budget.unitLimit;
  run.logs.push(`Program ${programId} failed: ${reason}`);
  return 'ComputationalBudgetExceeded';
}

function failed(run: Run, programId: string, detail: InstructionErrorDetail): InstructionErrorDetail {
  run.logs.push(`Program ${programId} failed: ${describeInstructionError(detail)}`);
  return detail;
}

function instructionAccount(tx: DevnetTransaction, key: number): InstructionAccount {
  return { address: tx.accountKeys[key]!, isSigner: key < tx.signerCount, isWritable: tx.writable[key]! };
}
