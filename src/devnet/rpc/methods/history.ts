import { invalidParams } from '../errors.js';
import type { RpcMethod } from '../method.js';
import { base58Param, checkCommitment, checkMinContextSlot, configParam } from '../params.js';

/**
 * getSignaturesForAddress: the landed transactions that list an address, newest first, as a
 * Solana node answers it. `before` and `until` are exclusive bounds; an unknown `before` (never
 * landed, or older than the kept history) answers [], an unknown `until` bounds nothing, as on
 * a node. Every landed transaction is final at once, so confirmationStatus is "finalized".
 */

export const MAX_SIGNATURES_FOR_ADDRESS = 1_000;

const getSignaturesForAddress: RpcMethod = (params, { bank }) => {
  const address = base58Param(params[0], 'address', 32);
  const config = configParam(params[1], 'config');
  checkCommitment(config);
  checkAtLeastConfirmed(config['commitment']);
  checkMinContextSlot(config, bank.slot);
  const limit = limitParam(config['limit']);
  const before = optionalSignature(config['before'], 'before');
  const until = optionalSignature(config['until'], 'until');
  const beforeSlot = before === undefined ? undefined : bank.signatureStatus(before)?.slot;
  if (before !== undefined && beforeSlot === undefined) return [];
  const untilSlot = until === undefined ? undefined : bank.signatureStatus(until)?.slot;
  return bank.signaturesForAddress(address, { beforeSlot, untilSlot, limit }).map(({ signature, slot, err, blockTime }) => ({
    signature,
    slot,
    err,
    memo: null,
    blockTime,
    confirmationStatus: 'finalized',
  }));
};

export const historyMethods = { getSignaturesForAddress };

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
