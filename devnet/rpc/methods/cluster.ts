import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { FEATURE_SET, SOLANA_CORE_VERSION, responseContext, type RpcMethod } from '../method.js';
import { configParam } from '../params.js';

/** Cluster state: blockhash, heights, health, version, each from the bank of its commitment (finalized by default). Block height equals the slot. */

const SLOTS_PER_EPOCH = 432_000;

const getLatestBlockhash: RpcMethod = (params, { at, faults }) => {
  const bank = at(configParam(params[0], 'config'));
  return { context: responseContext(bank), value: bank.latestBlockhash(faults.blockhashLagSlots) };
};

const getBlockHeight: RpcMethod = (params, { at }) => {
  return at(configParam(params[0], 'config')).blockHeight;
};

// The slot and height of one view in one answer: what a client anchors an expiry decision to.
// transactionCount is left out: the devnet does not count transactions.
const getEpochInfo: RpcMethod = (params, { at }) => {
  const bank = at(configParam(params[0], 'config'));
  const slot = bank.slot;
  return {
    absoluteSlot: slot,
    blockHeight: bank.blockHeight,
    epoch: Math.floor(slot / SLOTS_PER_EPOCH),
    slotIndex: slot % SLOTS_PER_EPOCH,
    slotsInEpoch: SLOTS_PER_EPOCH,
  };
};

const getSlot: RpcMethod = (params, { at }) => {
  return at(configParam(params[0], 'config')).slot;
};

const getHealth: RpcMethod = () => 'ok';

// A real cluster's genesis hash is its identity: each devnet chain answers its own, from its chain id.
const getGenesisHash: RpcMethod = (_params, { bank }) => bs58.encode(createHash('sha256').update(`bridge devnet chain ${bank.chainId}`).digest());

const getVersion: RpcMethod = () => ({ 'solana-core': SOLANA_CORE_VERSION, 'feature-set': FEATURE_SET });

export const clusterMethods = { getLatestBlockhash, getBlockHeight, getEpochInfo, getSlot, getHealth, getGenesisHash, getVersion };
