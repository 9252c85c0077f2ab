/**
 * Transaction errors in the JSON shapes a cluster reports (`err` of a status or a simulation),
 * and their Display text as the RPC server prints it in "Transaction simulation failed: ...".
 */

export type InstructionErrorDetail = { Custom: number } | 'UnsupportedProgramId' | 'ProgramFailedToComplete';

export type TransactionError =
  | 'BlockhashNotFound'
  | 'AlreadyProcessed'
  | 'InsufficientFundsForFee'
  | 'AccountNotFound'
  | { InstructionError: [number, InstructionErrorDetail] };

const TRANSACTION_ERROR_TEXT: Record<Exclude<TransactionError, object>, string> = {
  BlockhashNotFound: 'Blockhash not found',
  AlreadyProcessed: 'This transaction has already been processed',
  InsufficientFundsForFee: 'Insufficient funds for fee',
  AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
};

export function describeTransactionError(err: TransactionError): string {
  if (typeof err === 'string') return TRANSACTION_ERROR_TEXT[err];
  const [index, detail] = err.InstructionError;
  return `Error processing Instruction ${index}: ${describeInstructionError(detail)}`;
}

export function describeInstructionError(detail: InstructionErrorDetail): string {
  if (detail === 'UnsupportedProgramId') return 'Unsupported program id';
  if (detail === 'ProgramFailedToComplete') return 'Program failed to complete';
  return `custom program error: 0x${detail.Custom.toString(16)}`;
}
