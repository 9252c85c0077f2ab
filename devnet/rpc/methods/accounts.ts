import type { Account } from '../../program/store.js';
import { rentExemptMinimum } from '../../program/store.js';
import { invalidParams } from '../errors.js';
import { responseContext, type RpcMethod } from '../method.js';
import { arrayParam, base58Param, configParam, integerParam, type Config } from '../params.js';

/**
 * Account reads: getAccountInfo, getMultipleAccounts, getBalance, getMinimumBalanceForRentExemption.
 * Each answers from the bank of its commitment (finalized by default): the accounts as they were
 * at the end of that bank's slot, which the context names.
 */

const MAX_MULTIPLE_ACCOUNTS = 100;
// Accounts that never pay rent report rentEpoch u64::MAX. A JS number holds it as its nearest
// double, 2^64, which is also what a JSON reader makes of the exact digits a validator writes.
const RENT_EXEMPT_EPOCH = 2 ** 64;

interface EncodedAccount {
  data: [string, 'base64'];
  executable: boolean;
  lamports: number;
  owner: string;
  rentEpoch: number;
  space: number;
}

const getAccountInfo: RpcMethod = (params, { at }) => {
  const address = base58Param(params[0], 'pubkey', 32);
  const config = configParam(params[1], 'config');
  const bank = at(config);
  const encode = accountEncoder(config);
  return { context: responseContext(bank), value: encode(bank.account(address)) };
};

const getMultipleAccounts: RpcMethod = (params, { at }) => {
  const addresses = arrayParam(params[0], 'pubkeys', MAX_MULTIPLE_ACCOUNTS).map((key, i) => base58Param(key, `pubkeys[${i}]`, 32));
  const config = configParam(params[1], 'config');
  const bank = at(config);
  const encode = accountEncoder(config);
  return { context: responseContext(bank), value: addresses.map((address) => encode(bank.account(address))) };
};

const getBalance: RpcMethod = (params, { at }) => {
  const address = base58Param(params[0], 'pubkey', 32);
  const bank = at(configParam(params[1], 'config'));
  return { context: responseContext(bank), value: Number(bank.account(address)?.lamports ?? 0n) };
};

const getMinimumBalanceForRentExemption: RpcMethod = (params, { at }) => {
  const length = integerParam(params[0], 'dataLength', 0, 10 * 1024 * 1024);
  at(configParam(params[1], 'config'));
  return Number(rentExemptMinimum(length));
};

export const accountMethods = { getAccountInfo, getMultipleAccounts, getBalance, getMinimumBalanceForRentExemption };

/**
 * The devnet serves account data as base64 only; `dataSlice` cuts it as Agave's `slice_data`
 * does (docs/devnet.md): a slice past an account's end answers the bytes up to it, an offset past
 * the end none. getMultipleAccounts applies its one slice to every account so.
 */
function accountEncoder(config: Config): (account: Readonly<Account> | undefined) => EncodedAccount | null {
  const encoding = config['encoding'] ?? 'base64';
  if (encoding !== 'base64') {
    throw invalidParams(`Invalid params: encoding ${JSON.stringify(encoding)} is not supported by the devnet; use "base64"`);
  }
  const slice = dataSlice(config['dataSlice']);
  return (account) => (account === undefined ? null : encodeAccount(account, slice));
}

/** An account in the wire shape of a node (base64 data, optionally cut by `dataSlice` as above). */
export function encodeAccount(account: Readonly<Account>, slice?: { offset: number; length: number }): EncodedAccount {
  const data = slice === undefined ? account.data : account.data.subarray(slice.offset, slice.offset + slice.length);
  return {
    data: [Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64'), 'base64'],
    executable: account.executable,
    lamports: Number(account.lamports),
    owner: account.owner,
    rentEpoch: RENT_EXEMPT_EPOCH,
    space: account.data.length,
  };
}

function dataSlice(value: unknown): { offset: number; length: number } | undefined {
  if (value === undefined || value === null) return undefined;
  const slice = configParam(value, 'dataSlice');
  return { offset: integerParam(slice['offset'], 'dataSlice.offset'), length: integerParam(slice['length'], 'dataSlice.length') };
}
