import { address, getTransactionDecoder, lamports, signature as kitSignature, type Transaction } from '@solana/kit';
import bs58 from 'bs58';
import { LiteSVM, type FailedTransactionMetadata, type SimulatedTransactionInfo, type TransactionMetadata } from 'litesvm';
import {
  InstructionErrorCustom,
  TransactionErrorDuplicateInstruction,
  TransactionErrorInstructionError,
  TransactionErrorInsufficientFundsForRent,
} from 'litesvm/dist/internal.js';
import { MAX_TRANSACTION_SIZE } from '../../../devnet/bank/transaction.js';
import { RPC_ERRORS } from '../../../devnet/rpc/errors.js';
import type { ErrorShape, Outcome } from './outcome.js';

/**
 * Agave's runtime (LiteSVM: the SVM of a validator, without the validator) run on the same
 * signed bytes as the devnet. LiteSVM accepts only its own latest blockhash and has no way to
 * set it, so `useBlockhash` rewrites it in a snapshot of the bank's state (about 40 ms on a
 * loaded machine): the bytes the devnet accepts are then the bytes LiteSVM accepts.
 */

const SYSTEM_PROGRAM = address('11111111111111111111111111111111');
const NATIVE_LOADER = address('NativeLoader1111111111111111111111111111111');
const decoder = getTransactionDecoder();

export class LiteSvmRuntime {
  #svm = new LiteSVM();

  constructor() {
    this.#nameSystemProgramAsDevnet();
  }

  /** From now on, `blockhash` is LiteSVM's latest (every earlier one is unknown to it). */
  useBlockhash(blockhash: string): void {
    const current = this.#svm.latestBlockhash();
    if (current === blockhash) return;
    const bytes = this.#svm.toBytes();
    const offsets = offsetsOf(bytes, bs58.decode(current));
    if (offsets.length === 0) throw new Error('LiteSVM snapshot: its latest blockhash is not in its bytes; the snapshot format changed');
    for (const offset of offsets) bytes.set(bs58.decode(blockhash), offset);
    this.#svm = LiteSVM.fromBytes(bytes);
    this.#nameSystemProgramAsDevnet();
    if (this.#svm.latestBlockhash() !== blockhash)
      throw new Error(`LiteSVM snapshot: blockhash rewrite to ${blockhash} did not take; the snapshot format changed`);
  }

  /**
   * The System program's account as the devnet and Agave's genesis hold it (data: its builtin
   * name, `system_program`; LiteSVM names it `solana_system_program`, and a snapshot restores
   * that): a transaction loads its 14 bytes under a loaded-accounts data-size limit, so both
   * runtimes start from one state.
   */
  #nameSystemProgramAsDevnet(): void {
    const name = new TextEncoder().encode('system_program');
    this.#svm.setAccount({
      address: SYSTEM_PROGRAM,
      lamports: lamports(1n),
      programAddress: NATIVE_LOADER,
      data: name,
      executable: true,
      space: BigInt(name.length),
    });
  }

  /** Creates System accounts holding these lamports (0: no account). */
  fund(balances: ReadonlyMap<string, bigint>): void {
    for (const [key, amount] of balances) {
      if (amount > 0n)
        this.#svm.setAccount({
          address: address(key),
          lamports: lamports(amount),
          programAddress: SYSTEM_PROGRAM,
          data: new Uint8Array(0),
          executable: false,
          space: 0n,
        });
    }
  }

  /** Creates or replaces a System account holding `data`: a state given to both runtimes, or the devnet's where the two differ. */
  setSystemAccount(key: string, lamportsHeld: bigint, data: Uint8Array): void {
    this.#svm.setAccount({
      address: address(key),
      lamports: lamports(lamportsHeld),
      programAddress: SYSTEM_PROGRAM,
      data,
      executable: false,
      space: BigInt(data.length),
    });
  }

  /** An account's data (undefined: no account). */
  accountData(key: string): Uint8Array | undefined {
    const account = this.#svm.getAccount(address(key));
    return account.exists ? Uint8Array.from(account.data) : undefined;
  }

  run(wire: Uint8Array, accounts: readonly string[]): Outcome {
    const before = this.#total(accounts);
    const decoded = this.#rpcRefusal(wire);
    if ('rpcError' in decoded) return { landed: false, error: decoded, fee: 0n, unitsConsumed: 0, balances: this.#balances(accounts) };
    const id = kitSignature(bs58.encode(wire.subarray(1, 65)));
    const seenBefore = this.#svm.getTransaction(id) !== null;
    const result = this.#svm.sendTransaction(decoded);
    const landed = !seenBefore && this.#svm.getTransaction(id) !== null;
    const meta = isFailed(result) ? result.meta() : result;
    return {
      landed,
      error: isFailed(result) ? errorShape(result) : null,
      fee: before - this.#total(accounts),
      unitsConsumed: Number(meta.computeUnitsConsumed()),
      balances: this.#balances(accounts),
    };
  }

  /**
   * What a node's RPC layer refuses with -32602 before any bank runs the bytes: more than
   * PACKET_DATA_SIZE, bytes that do not decode, and a message the runtime's sanitization refuses
   * (Agave's sendTransaction sanitizes, compute-budget instructions included, before it verifies
   * a signature or looks at the blockhash). LiteSVM is the bank alone: its sanitization is asked
   * here with its signature and blockhash checks off, which a simulation does not commit.
   */
  #rpcRefusal(wire: Uint8Array): Transaction | { rpcError: number } {
    if (wire.length > MAX_TRANSACTION_SIZE) return { rpcError: RPC_ERRORS.INVALID_PARAMS };
    let decoded: Transaction;
    try {
      decoded = decoder.decode(wire);
    } catch {
      return { rpcError: RPC_ERRORS.INVALID_PARAMS };
    }
    this.#svm.withSigverify(false).withBlockhashCheck(false);
    const unchecked = this.#svm.simulateTransaction(decoded);
    this.#svm.withSigverify(true).withBlockhashCheck(true);
    if (isFailed(unchecked) && SANITIZATION_ERRORS.has(errorName(unchecked.err()))) return { rpcError: RPC_ERRORS.INVALID_PARAMS };
    return decoded;
  }

  /**
   * Balances as a node reads them: an account without lamports does not exist (Agave's
   * accounts-db). LiteSVM drops one a successful transaction empties but keeps, at 0, a fee
   * payer the fee of a failed one empties.
   */
  #balances(accounts: readonly string[]): Record<string, bigint | null> {
    return Object.fromEntries(
      accounts.map((key) => {
        const lamports = this.#svm.getBalance(address(key));
        return [key, lamports === 0n ? null : lamports];
      }),
    );
  }

  #total(accounts: readonly string[]): bigint {
    return accounts.reduce((sum, key) => sum + (this.#svm.getBalance(address(key)) ?? 0n), 0n);
  }
}

function isFailed(result: TransactionMetadata | FailedTransactionMetadata | SimulatedTransactionInfo): result is FailedTransactionMetadata {
  return 'err' in result && typeof result.err === 'function';
}

/** What Agave's sanitization (RuntimeTransaction::try_create) refuses, compute-budget duplicates included. */
const SANITIZATION_ERRORS = new Set(['SanitizeFailure', 'AccountLoadedTwice', 'DuplicateInstruction']);

function errorName(err: ReturnType<FailedTransactionMetadata['err']>): string {
  if (typeof err === 'number') return TRANSACTION_ERRORS[err] ?? `TransactionError#${err}`;
  return err.constructor.name.replace(/^TransactionError/, '');
}

/** LiteSVM's TransactionError as the JSON a node answers (solana-transaction-error's serde form). */
function errorShape(result: FailedTransactionMetadata): ErrorShape {
  const err = result.err();
  if (typeof err === 'number') {
    const name = TRANSACTION_ERRORS[err] ?? `TransactionError#${err}`;
    if (name === 'SignatureFailure') return { rpcError: RPC_ERRORS.TRANSACTION_SIGNATURE_VERIFICATION_FAILURE };
    return { err: name };
  }
  if (err instanceof TransactionErrorInstructionError) return { err: { InstructionError: [err.index, instructionError(err.err())] } };
  if (err instanceof TransactionErrorDuplicateInstruction) return { err: { DuplicateInstruction: err.index } };
  if (err instanceof TransactionErrorInsufficientFundsForRent) return { err: { InsufficientFundsForRent: { account_index: err.accountIndex } } };
  return { err: `unmapped LiteSVM error: ${err.toString()}` };
}

function instructionError(err: ReturnType<TransactionErrorInstructionError['err']>): unknown {
  if (typeof err === 'number') return INSTRUCTION_ERRORS[err] ?? `InstructionError#${err}`;
  if (err instanceof InstructionErrorCustom) return { Custom: err.code };
  return { BorshIoError: err.toString() };
}

function offsetsOf(haystack: Uint8Array, needle: Uint8Array): number[] {
  const offsets: number[] = [];
  const text = Buffer.from(haystack);
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) offsets.push(at);
  return offsets;
}

// The variants of solana-transaction-error's TransactionError and InstructionError without
// fields, in declaration order: LiteSVM hands them over as these indexes.
const TRANSACTION_ERRORS = [
  'AccountInUse',
  'AccountLoadedTwice',
  'AccountNotFound',
  'ProgramAccountNotFound',
  'InsufficientFundsForFee',
  'InvalidAccountForFee',
  'AlreadyProcessed',
  'BlockhashNotFound',
  'CallChainTooDeep',
  'MissingSignatureForFee',
  'InvalidAccountIndex',
  'SignatureFailure',
  'InvalidProgramForExecution',
  'SanitizeFailure',
  'ClusterMaintenance',
  'AccountBorrowOutstanding',
  'WouldExceedMaxBlockCostLimit',
  'UnsupportedVersion',
  'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit',
  'WouldExceedAccountDataBlockLimit',
  'TooManyAccountLocks',
  'AddressLookupTableNotFound',
  'InvalidAddressLookupTableOwner',
  'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex',
  'InvalidRentPayingAccount',
  'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit',
  'MaxLoadedAccountsDataSizeExceeded',
  'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit',
  'UnbalancedTransaction',
  'ProgramCacheHitMaxLimit',
  'CommitCancelled',
];

const INSTRUCTION_ERRORS = [
  'GenericError',
  'InvalidArgument',
  'InvalidInstructionData',
  'InvalidAccountData',
  'AccountDataTooSmall',
  'InsufficientFunds',
  'IncorrectProgramId',
  'MissingRequiredSignature',
  'AccountAlreadyInitialized',
  'UninitializedAccount',
  'UnbalancedInstruction',
  'ModifiedProgramId',
  'ExternalAccountLamportSpend',
  'ExternalAccountDataModified',
  'ReadonlyLamportChange',
  'ReadonlyDataModified',
  'DuplicateAccountIndex',
  'ExecutableModified',
  'RentEpochModified',
  'NotEnoughAccountKeys',
  'AccountDataSizeChanged',
  'AccountNotExecutable',
  'AccountBorrowFailed',
  'AccountBorrowOutstanding',
  'DuplicateAccountOutOfSync',
  'InvalidError',
  'ExecutableDataModified',
  'ExecutableLamportChange',
  'ExecutableAccountNotRentExempt',
  'UnsupportedProgramId',
  'CallDepth',
  'MissingAccount',
  'ReentrancyNotAllowed',
  'MaxSeedLengthExceeded',
  'InvalidSeeds',
  'InvalidRealloc',
  'ComputationalBudgetExceeded',
  'PrivilegeEscalation',
  'ProgramEnvironmentSetupFailure',
  'ProgramFailedToComplete',
  'ProgramFailedToCompile',
  'Immutable',
  'IncorrectAuthority',
  'AccountNotRentExempt',
  'InvalidAccountOwner',
  'ArithmeticOverflow',
  'UnsupportedSysvar',
  'IllegalOwner',
  'MaxAccountsDataAllocationsExceeded',
  'MaxAccountsExceeded',
  'MaxInstructionTraceLengthExceeded',
  'BuiltinProgramsMustConsumeComputeUnits',
];
