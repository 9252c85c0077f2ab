/**
 * Error codes of PROTOCOL.md "Errors": the bridge program's custom errors and the Anchor
 * framework codes it can report; and what a transaction error says (a preflight refusal's
 * `data.err`, or a landed transaction's status `err`), as facts: a program error by its
 * PROTOCOL.md name, or a runtime error by its name.
 */

export const PROGRAM_ERRORS = {
  NotAnAuthority: 6000,
  VoteOutOfOrder: 6001,
  VoteMismatch: 6002,
  InvalidVote: 6003,
  EntryNotFound: 6004,
  EntryNotFinalized: 6005,
  CleanupAlreadyCompleted: 6006,
  TrackerFull: 6007,
  InvalidAccount: 6008,
  InvalidResult: 6009,
  Unauthorized: 6010,
  InvalidAmount: 6011,
  NotWithdrawable: 6012,
} as const;

/** PROTOCOL.md's framework codes, with Anchor's names (0 is an account initialized twice). */
export const FRAMEWORK_ERRORS = {
  AccountAlreadyInitialized: 0,
  InstructionMissing: 100,
  InstructionFallbackNotFound: 101,
  InstructionDidNotDeserialize: 102,
  RequireViolated: 2500,
} as const;

export type ProgramErrorName = keyof typeof PROGRAM_ERRORS;
export type FrameworkErrorName = keyof typeof FRAMEWORK_ERRORS;

const NAME_BY_CODE = new Map<number, string>(
  [...Object.entries(PROGRAM_ERRORS), ...Object.entries(FRAMEWORK_ERRORS)].map(([name, code]) => [code, name]),
);

export function programErrorName(code: number): ProgramErrorName | FrameworkErrorName | undefined {
  return NAME_BY_CODE.get(code) as ProgramErrorName | FrameworkErrorName | undefined;
}

export interface DecodedProgramError {
  instructionIndex: number;
  code: number;
  /** The PROTOCOL.md name, or `Custom(<code>)` for a code PROTOCOL.md does not list. */
  name: string;
}

/**
 * Decodes `{"InstructionError":[ix,{"Custom":code}]}` (a transaction status's `err`).
 * Any other shape (a transaction-level error, a non-custom instruction error) is undefined.
 */
export function decodeProgramError(transactionError: unknown): DecodedProgramError | undefined {
  if (!isRecord(transactionError)) return undefined;
  const instructionError = transactionError['InstructionError'];
  if (!Array.isArray(instructionError) || instructionError.length !== 2) return undefined;
  const [instructionIndex, detail] = instructionError as [unknown, unknown];
  if (!isU32(instructionIndex) || !isRecord(detail)) return undefined;
  const code = detail['Custom'];
  if (!isU32(code)) return undefined;
  return { instructionIndex, code, name: programErrorName(code) ?? `Custom(${code})` };
}

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
export function runtimeInstructionError(transactionError: unknown): [number, string] | undefined {
  if (typeof transactionError !== 'object' || transactionError === null) return undefined;
  const detail = (transactionError as { InstructionError?: unknown }).InstructionError;
  if (!Array.isArray(detail) || typeof detail[0] !== 'number' || typeof detail[1] !== 'string') return undefined;
  return [detail[0], detail[1]];
}

/** The transaction was processed before: the same bytes already landed. */
export function isAlreadyProcessed(transactionError: unknown): boolean {
  return transactionError === 'AlreadyProcessed';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isU32(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 0xffff_ffff;
}
