import type { RpcMethod } from '../method.js';
import { arrayParam, base58Param } from '../params.js';

/**
 * getRecentPrioritizationFees([addresses]): per recent completed slot, oldest first,
 * `{ slot, prioritizationFee }` as Agave answers it (bank/prioritization-fees.ts). At most 128
 * addresses, as many as a transaction may lock.
 */

const MAX_TX_ACCOUNT_LOCKS = 128;

const getRecentPrioritizationFees: RpcMethod = (params, { bank }) => {
  const given = params[0] ?? [];
  const accounts = arrayParam(given, 'addresses', MAX_TX_ACCOUNT_LOCKS).map((address, i) => base58Param(address, `addresses[${i}]`, 32));
  return bank.recentPrioritizationFees(accounts).map(({ slot, prioritizationFee }) => ({ slot, prioritizationFee: Number(prioritizationFee) }));
};

export const feeMethods = { getRecentPrioritizationFees };
