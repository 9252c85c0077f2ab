import { decodeProgramError, programErrorName, type DecodedProgramError } from '../program-errors.js';

/**
 * What a transaction error (a preflight refusal's `data.err`, or a landed transaction's
 * status `err`) says, as facts: a program error by its PROTOCOL.md name, or a runtime error by
 * its name. Whether the action tries again is src/failure-policy.ts's decision.
 */

export interface TransactionFailure {
  /** e.g. "VoteOutOfOrder (6001)", "BlockhashNotFound". */
  reason: string;
  programError?: DecodedProgramError;
  /** The runtime error's name (e.g. "BlockhashNotFound") when it is not a program error. */
  transactionError?: string;
}

// The fee payer cannot pay: the reason says what to do.
const UNFUNDED_FEE_PAYER = new Set(['InsufficientFundsForFee', 'AccountNotFound']);

export function classifyTransactionError(transactionError: unknown): TransactionFailure {
  const programError = decodeProgramError(transactionError);
  if (programError !== undefined) {
    const { code } = programError;
    const known = programErrorName(code) !== undefined;
    const reason = known ? `${programError.name} (${code})` : `custom program error ${code}, not listed in PROTOCOL.md`;
    return { reason, programError };
  }
  const instructionError = runtimeInstructionError(transactionError);
  if (instructionError !== undefined) {
    const [position, name] = instructionError;
    return { reason: `${name} in instruction ${position}`, transactionError: name };
  }
  if (typeof transactionError === 'string') {
    if (UNFUNDED_FEE_PAYER.has(transactionError)) {
      return { reason: `${transactionError}: the authority cannot pay the fee; fund it on this chain`, transactionError };
    }
    return { reason: transactionError, transactionError };
  }
  return { reason: JSON.stringify(transactionError) ?? String(transactionError) };
}

/** `{"InstructionError":[i,"<name>"]}`: a runtime error of one instruction, e.g. ComputationalBudgetExceeded. */
function runtimeInstructionError(transactionError: unknown): [number, string] | undefined {
  if (typeof transactionError !== 'object' || transactionError === null) return undefined;
  const detail = (transactionError as { InstructionError?: unknown }).InstructionError;
  if (!Array.isArray(detail) || typeof detail[0] !== 'number' || typeof detail[1] !== 'string') return undefined;
  return [detail[0], detail[1]];
}

/** The transaction was processed before: the same bytes already landed. */
export function isAlreadyProcessed(transactionError: unknown): boolean {
  return transactionError === 'AlreadyProcessed';
}
