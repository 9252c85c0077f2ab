import type { AddressSignature, AddressSignatureQuery } from '../../bank/history.js';
import type { ForgedHistory } from '../../faults/forged-history.js';
import { RpcError, historyNotAvailable, invalidParams } from '../errors.js';
import type { RpcMethod } from '../method.js';
import { base58Param, checkCommitment, checkMinContextSlot, configParam } from '../params.js';

/**
 * History reads. getSignaturesForAddress: the landed transactions that list an address, newest
 * first, as a Solana node answers it. `before` and `until` are exclusive bounds; an unknown `before` (never
 * landed, or older than the kept history) answers [], an unknown `until` bounds nothing, as on
 * a node. Every landed transaction is final at once, so confirmationStatus is "finalized".
 * getTransaction: one recent transaction, `base64` encoding only, with the meta fields the
 * devnet knows (err, status, fee, logMessages, computeUnitsConsumed); airdrops are not transactions
 * and answer null. An endpoint with the `noHistory` fault answers both with -32011, as a node
 * without history does.
 */

const MAX_SIGNATURES_FOR_ADDRESS = 1_000;

const getSignaturesForAddress: RpcMethod = (params, { bank, faults }) => {
  if (faults.noHistory) throw historyNotAvailable();
  const address = base58Param(params[0], 'address', 32);
  const config = configParam(params[1], 'config');
  checkCommitment(config);
  checkAtLeastConfirmed(config['commitment']);
  checkMinContextSlot(config, bank.slot);
  const limit = limitParam(config['limit']);
  const before = optionalSignature(config['before'], 'before');
  const until = optionalSignature(config['until'], 'until');
  const slotOf = (signature: string) => bank.signatureStatus(signature)?.slot ?? faults.forgedHistory?.transactions.get(signature)?.slot;
  const beforeSlot = before === undefined ? undefined : slotOf(before);
  if (before !== undefined && beforeSlot === undefined) return [];
  const untilSlot = until === undefined ? undefined : slotOf(until);
  const landed = bank.signaturesForAddress(address, { beforeSlot, untilSlot, limit });
  return withForged(landed, faults.forgedHistory, address, { beforeSlot, untilSlot, limit }).map(({ signature, slot, err, blockTime }) => ({
    signature,
    slot,
    err,
    memo: null,
    blockTime,
    confirmationStatus: 'finalized',
  }));
};

// A node's answer when a v0 transaction is asked for without maxSupportedTransactionVersion.
const UNSUPPORTED_TRANSACTION_VERSION = -32015;

const getTransaction: RpcMethod = (params, { bank, faults }) => {
  if (faults.noHistory) throw historyNotAvailable();
  const signature = base58Param(params[0], 'signature', 64);
  const config = configParam(params[1], 'config');
  checkCommitment(config);
  checkAtLeastConfirmed(config['commitment']);
  const encoding = config['encoding'] ?? 'json';
  if (encoding !== 'base64') {
    throw invalidParams(`Invalid params: encoding ${JSON.stringify(encoding)} is not supported by the devnet's getTransaction; use "base64"`);
  }
  const maxVersion = config['maxSupportedTransactionVersion'];
  if (maxVersion !== undefined && maxVersion !== null && maxVersion !== 0) {
    throw invalidParams('Invalid params: maxSupportedTransactionVersion must be 0');
  }
  const landed = bank.transaction(signature) ?? faults.forgedHistory?.transactions.get(signature);
  if (landed === undefined) return null;
  if (landed.version === 0 && maxVersion !== 0) {
    throw new RpcError(
      UNSUPPORTED_TRANSACTION_VERSION,
      'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
    );
  }
  return {
    slot: landed.slot,
    blockTime: landed.blockTime,
    transaction: [Buffer.from(landed.wire).toString('base64'), 'base64'],
    meta: {
      err: landed.err,
      status: landed.err === null ? { Ok: null } : { Err: landed.err },
      fee: Number(landed.fee),
      logMessages: landed.logMessages,
      computeUnitsConsumed: landed.computeUnitsConsumed,
    },
    version: landed.version,
  };
};

export const historyMethods = { getSignaturesForAddress, getTransaction };

/** A lying node's forged entries among the landed ones: newest first, the forged above the landed of their slot. */
function withForged(
  landed: AddressSignature[],
  forged: ForgedHistory | null,
  address: string,
  { beforeSlot, untilSlot, limit }: AddressSignatureQuery,
): AddressSignature[] {
  if (forged === null || forged.address !== address) return landed;
  const inRange = forged.entries.filter(({ slot }) => (beforeSlot === undefined || slot < beforeSlot) && (untilSlot === undefined || slot > untilSlot));
  return [...landed, ...inRange].sort((a, b) => b.slot - a.slot || Number(forged.transactions.has(b.signature)) - Number(forged.transactions.has(a.signature))).slice(0, limit);
}

function limitParam(value: unknown): number {
  if (value === undefined || value === null) return MAX_SIGNATURES_FOR_ADDRESS;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_SIGNATURES_FOR_ADDRESS) {
    throw invalidParams(`Invalid limit; max ${MAX_SIGNATURES_FOR_ADDRESS}`);
  }
  return value;
}

function optionalSignature(value: unknown, name: string): string | undefined {
  return value === undefined || value === null ? undefined : base58Param(value, name, 64);
}

// A node answers history only from confirmed blocks.
function checkAtLeastConfirmed(commitment: unknown): void {
  if (commitment === 'processed' || commitment === 'recent' || commitment === 'single' || commitment === 'singleGossip') {
    throw invalidParams('Method does not support commitment below `confirmed`');
  }
}
