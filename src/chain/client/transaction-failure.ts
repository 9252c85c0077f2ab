import { decodeProgramError, programErrorName, type DecodedProgramError } from '../program-errors.js';

/**
 * What a transaction error (a preflight refusal's `data.err`, or a landed transaction's
 * status `err`) means for the action: a program error by its PROTOCOL.md name, never
 * retryable within the action (the next cycle plans from fresh state); or a runtime error,
 * retryable only when it describes a passing condition of the cluster.
 */

export interface TransactionFailure {
  retryable: boolean;
  /** e.g. "VoteOutOfOrder (6001)", "BlockhashNotFound". */
  reason: string;
  programError?: DecodedProgramError;
}

// Runtime errors after which the same instructions may succeed in a new transaction.
const TRANSIENT_TRANSACTION_ERRORS = new Set([
  'BlockhashNotFound',
  'AccountInUse',
  'ClusterMaintenance',
  'WouldExceedMaxBlockCostLimit',
  'WouldExceedMaxAccountCostLimit',
  'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataBlockLimit',
  'TooManyAccountLocks',
]);

// The fee payer cannot pay: retrying spends nothing but time until someone funds it.
const UNFUNDED_FEE_PAYER = new Set(['InsufficientFundsForFee', 'AccountNotFound']);

export function classifyTransactionError(transactionError: unknown): TransactionFailure {
  const programError = decodeProgramError(transactionError);
  if (programError !== undefined) {
    const { code } = programError;
    const known = programErrorName(code) !== undefined;
    const reason = known ? `${programError.name} (${code})` : `custom program error ${code}, not listed in PROTOCOL.md`;
    return { retryable: false, reason, programError };
  }
  if (typeof transactionError === 'string') {
    if (UNFUNDED_FEE_PAYER.has(transactionError)) {
      return { retryable: false, reason: `${transactionError}: the authority cannot pay the fee; fund it on this chain` };
    }
    return { retryable: TRANSIENT_TRANSACTION_ERRORS.has(transactionError), reason: transactionError };
  }
  return { retryable: false, reason: JSON.stringify(transactionError) ?? String(transactionError) };
}

/** The transaction was processed before: the same bytes already landed. */
export function isAlreadyProcessed(transactionError: unknown): boolean {
  return transactionError === 'AlreadyProcessed';
}
