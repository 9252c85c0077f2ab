import { landedBefore, type AddressSignature, type AddressSignatureQuery, type LandingPosition } from '../../bank/history.js';
import type { ForgedHistory } from '../../faults/forged-history.js';
import { RpcError, historyNotAvailable, invalidParams } from '../errors.js';
import type { RpcMethod } from '../method.js';
import { configParam, base58Param } from '../params.js';

/**
 * History reads. getSignaturesForAddress: the landed transactions that list an address, newest
 * first, as a Solana node answers it, from the bank of its commitment (confirmed or finalized,
 * finalized by default): transactions of later slots are not listed yet. `before` and `until`
 * are exclusive bounds (landing positions: several transactions share a slot); an unknown
 * `before` (never landed, or older than the kept history) answers [], an unknown `until` bounds
 * nothing, as on a node. confirmationStatus says which bank has each (Agave's
 * get_signatures_for_address: finalized at or below the root, else confirmed).
 * getTransaction: one recent transaction, `base64` encoding only, with the meta fields the
 * devnet knows (err, status, fee, logMessages, computeUnitsConsumed); airdrops are not transactions
 * and answer null. An endpoint with the `noHistory` fault answers both with -32011, as a node
 * without history does.
 */

const MAX_SIGNATURES_FOR_ADDRESS = 1_000;

const getSignaturesForAddress: RpcMethod = (params, { faults, at }) => {
  if (faults.noHistory) throw historyNotAvailable();
  const address = base58Param(params[0], 'address', 32);
  const config = configParam(params[1], 'config');
  checkAtLeastConfirmed(config['commitment']);
  const bank = at(config);
  const limit = limitParam(config['limit']);
  const before = optionalSignature(config['before'], 'before');
  const until = optionalSignature(config['until'], 'until');
  // A forged signature bounds by its slot: `before` it excludes its whole slot, `until` too.
  const positionOf = (signature: string, forgedSeq: number): LandingPosition | undefined => {
    const status = bank.signatureStatus(signature);
    if (status !== undefined) return status;
    const forged = faults.forgedHistory?.transactions.get(signature);
    return forged === undefined ? undefined : { slot: forged.slot, seq: forgedSeq };
  };
  const beforePosition = before === undefined ? undefined : positionOf(before, -1);
  if (before !== undefined && beforePosition === undefined) return [];
  const untilPosition = until === undefined ? undefined : positionOf(until, Number.POSITIVE_INFINITY);
  const query = { before: beforePosition, until: untilPosition, limit };
  const finalizedSlot = bank.finalizedSlot;
  return withForged(bank.signaturesForAddress(address, query), faults.forgedHistory, address, query).map(({ signature, slot, err, blockTime }) => ({
    signature,
    slot,
    err,
    memo: null,
    blockTime,
    confirmationStatus: slot <= finalizedSlot ? 'finalized' : 'confirmed',
  }));
};

// A node's answer when a v0 transaction is asked for without maxSupportedTransactionVersion.
const UNSUPPORTED_TRANSACTION_VERSION = -32015;

const getTransaction: RpcMethod = (params, { faults, at }) => {
  if (faults.noHistory) throw historyNotAvailable();
  const signature = base58Param(params[0], 'signature', 64);
  const config = configParam(params[1], 'config');
  checkAtLeastConfirmed(config['commitment']);
  // Agave's getTransaction takes no minContextSlot: only the commitment chooses the bank.
  const bank = at({ commitment: config['commitment'] });
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
  { before, until, limit }: AddressSignatureQuery,
): AddressSignature[] {
  if (forged === null || forged.address !== address) return landed;
  const inRange = forged.entries.filter(
    (entry) => (before === undefined || landedBefore(entry, before)) && (until === undefined || landedBefore(until, entry)),
  );
  return [...landed, ...inRange].sort((a, b) => b.slot - a.slot || b.seq - a.seq).slice(0, limit);
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
