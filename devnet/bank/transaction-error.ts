/**
 * Transaction errors in the JSON shapes a cluster reports (`err` of a status or a simulation),
 * and their Display text as the RPC server prints it in "Transaction simulation failed: ...".
 */

const INSTRUCTION_ERROR_TEXT = {
  ProgramFailedToComplete: 'Program failed to complete',
  ComputationalBudgetExceeded: 'Computational budget exceeded',
  InvalidInstructionData: 'invalid instruction data',
  NotEnoughAccountKeys: 'insufficient account keys for instruction',
  MissingRequiredSignature: 'missing required signature for instruction',
  InvalidArgument: 'invalid program argument',
  InvalidAccountData: 'invalid account data for instruction',
  AccountDataTooSmall: 'account data too small for instruction',
  InsufficientFunds: 'insufficient funds for instruction',
  ExternalAccountDataModified: 'instruction modified data of an account it does not own',
  ReadonlyDataModified: 'instruction modified data of a read-only account',
  ExecutableDataModified: 'instruction changed executable accounts data',
  MaxSeedLengthExceeded: 'Length of the seed is too long for address generation',
  IllegalOwner: 'Provided owner is not allowed',
  ExternalAccountLamportSpend: 'instruction spent from the balance of an account it does not own',
  ReadonlyLamportChange: 'instruction changed the balance of a read-only account',
  ExecutableLamportChange: 'instruction changed the balance of an executable account',
  ModifiedProgramId: 'instruction illegally modified the program id of an account',
} as const;

export type InstructionErrorDetail = { Custom: number } | keyof typeof INSTRUCTION_ERROR_TEXT;

export type TransactionError =
  | 'BlockhashNotFound'
  | 'AlreadyProcessed'
  | 'InsufficientFundsForFee'
  | 'AccountNotFound'
  | 'InvalidLoadedAccountsDataSizeLimit'
  | 'InvalidProgramForExecution'
  | 'MaxLoadedAccountsDataSizeExceeded'
  | { InsufficientFundsForRent: { account_index: number } }
  | { InstructionError: [number, InstructionErrorDetail] };

const TRANSACTION_ERROR_TEXT: Record<Exclude<TransactionError, object>, string> = {
  BlockhashNotFound: 'Blockhash not found',
  AlreadyProcessed: 'This transaction has already been processed',
  InsufficientFundsForFee: 'Insufficient funds for fee',
  AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
  InvalidLoadedAccountsDataSizeLimit: 'LoadedAccountsDataSizeLimit set for transaction must be greater than 0.',
  InvalidProgramForExecution: 'This program may not be used for executing instructions',
  MaxLoadedAccountsDataSizeExceeded: 'Transaction exceeded max loaded accounts data size cap',
};

export function describeTransactionError(err: TransactionError): string {
  if (typeof err === 'string') return TRANSACTION_ERROR_TEXT[err];
  if ('InsufficientFundsForRent' in err)
    return `Transaction results in an account (${err.InsufficientFundsForRent.account_index}) with insufficient funds for rent`;
  const [index, detail] = err.InstructionError;
  return `Error processing Instruction ${index}: ${describeInstructionError(detail)}`;
}

export function describeInstructionError(detail: InstructionErrorDetail): string {
  if (typeof detail === 'string') return INSTRUCTION_ERROR_TEXT[detail];
  return `custom program error: 0x${detail.Custom.toString(16)}`;
}
