import bs58 from 'bs58';
import { TRANSACTION_ACCOUNT_BASE_SIZE } from '../../src/chain/codec/compute-budget.js';
import type { Account } from '../program/store.js';
import type { TransactionError } from './transaction-error.js';

/**
 * The loaded-accounts data size of a transaction, as Agave's account loader counts it against
 * the transaction's limit (SIMD-0186, `TRANSACTION_ACCOUNT_BASE_SIZE`): every account the
 * message lists, once, at its data length plus 64 bytes, and for a program of the upgradeable
 * loader its programdata account too (devnet/program/deployment.ts); an account that does not
 * exist counts 0.
 */

const UPGRADEABLE_LOADER = 'BPFLoaderUpgradeab1e11111111111111111111111';
const PROGRAM_STATE_SIZE = 36;

export function loadedAccountsDataSize(accountKeys: readonly string[], lookup: (address: string) => Readonly<Account> | undefined): number {
  return [...new Set(accountKeys)].reduce((sum, address) => {
    const account = lookup(address);
    if (account === undefined) return sum;
    const programData = programDataOf(account, lookup);
    return (
      sum +
      TRANSACTION_ACCOUNT_BASE_SIZE +
      account.data.length +
      (programData === undefined ? 0 : TRANSACTION_ACCOUNT_BASE_SIZE + programData.data.length)
    );
  }, 0);
}

/** The programdata account of an upgradeable program (tag 2, then its address), when it exists. */
function programDataOf(account: Readonly<Account>, lookup: (address: string) => Readonly<Account> | undefined): Readonly<Account> | undefined {
  if (account.owner !== UPGRADEABLE_LOADER || !account.executable || account.data.length !== PROGRAM_STATE_SIZE || account.data[0] !== 2)
    return undefined;
  return lookup(bs58.encode(account.data.subarray(4, PROGRAM_STATE_SIZE)));
}

/** A transaction that loads more than its limit fails its load: nothing runs, the fee is charged (SIMD-0191, bank.ts #loadError). */
export function loadedAccountsRefusal(
  accountKeys: readonly string[],
  limit: number,
  lookup: (address: string) => Readonly<Account> | undefined,
): TransactionError | undefined {
  return loadedAccountsDataSize(accountKeys, lookup) > limit ? 'MaxLoadedAccountsDataSizeExceeded' : undefined;
}
