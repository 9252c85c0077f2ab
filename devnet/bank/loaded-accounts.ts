import { TRANSACTION_ACCOUNT_BASE_SIZE } from '../../src/chain/codec/compute-budget.js';
import type { Account } from '../program/store.js';
import type { TransactionError } from './transaction-error.js';

/**
 * The loaded-accounts data size of a transaction, as Agave's account loader counts it against
 * the transaction's limit (SIMD-0186, `TRANSACTION_ACCOUNT_BASE_SIZE`): every account the
 * message lists, once, at its data length plus 64 bytes; an account that does not exist counts
 * 0. (Agave also counts the programdata account of an upgradeable program the message invokes;
 * the devnet's bridge program has none, so its program account, 36 bytes, is all it loads.)
 */

export function loadedAccountsDataSize(accountKeys: readonly string[], lookup: (address: string) => Readonly<Account> | undefined): number {
  return accountKeys.reduce((sum, address) => {
    const account = lookup(address);
    return account === undefined ? sum : sum + TRANSACTION_ACCOUNT_BASE_SIZE + account.data.length;
  }, 0);
}

/** A transaction that loads more than its limit fails its load: nothing runs, the fee is charged (SIMD-0191, bank.ts #loadError). */
export function loadedAccountsRefusal(
  accountKeys: readonly string[],
  limit: number,
  lookup: (address: string) => Readonly<Account> | undefined,
): TransactionError | undefined {
  return loadedAccountsDataSize(accountKeys, lookup) > limit ? 'MaxLoadedAccountsDataSizeExceeded' : undefined;
}
