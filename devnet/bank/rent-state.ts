import { rentExemptMinimum, type Account } from '../program/store.js';
import type { DevnetTransaction } from './transaction.js';
import type { TransactionError } from './transaction-error.js';

/**
 * Rent states, as Agave's runtime checks them (LiteSVM 1.5.0, SIMD-0392's relaxed rule): after
 * its fee and after its instructions, every account a transaction may write holds no lamports,
 * at least the rent-exempt minimum for its size, or, if it was already below that minimum, no
 * fewer lamports than before. Otherwise the transaction fails with InsufficientFundsForRent
 * naming the first such account: before the fee for the fee payer (nothing charged), after the
 * instructions for any writable account (the fee charged, nothing else applied).
 */

export function rentStateAllowed(before: bigint, after: bigint, dataLength: number): boolean {
  return after === 0n || after >= rentExemptMinimum(dataLength) || (before > 0n && after >= before);
}

export function insufficientFundsForRent(accountIndex: number): TransactionError {
  return { InsufficientFundsForRent: { account_index: accountIndex } };
}

/** Lamports of every account key before the transaction (0: no account), for `rentStateViolation`. */
export function balancesBefore(tx: DevnetTransaction, get: (address: string) => Readonly<Account> | undefined): bigint[] {
  return tx.accountKeys.map((address) => get(address)?.lamports ?? 0n);
}

/** The first writable account the transaction left in a rent state it may not reach. */
export function rentStateViolation(
  tx: DevnetTransaction,
  before: readonly bigint[],
  get: (address: string) => Readonly<Account> | undefined,
): TransactionError | undefined {
  const index = tx.accountKeys.findIndex((address, i) => {
    const account = get(address);
    return tx.writable[i] === true && !rentStateAllowed(before[i]!, account?.lamports ?? 0n, account?.data.length ?? 0);
  });
  return index === -1 ? undefined : insufficientFundsForRent(index);
}
