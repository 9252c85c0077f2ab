import { FEATURE_SET, SOLANA_CORE_VERSION, responseContext, type RpcMethod } from '../method.js';
import { checkReadConfig, configParam } from '../params.js';

/** Cluster state: blockhash, heights, health, version. Block height equals the slot. */

const getLatestBlockhash: RpcMethod = (params, { bank }) => {
  checkReadConfig(configParam(params[0], 'config'), bank.slot);
  return { context: responseContext(bank), value: bank.latestBlockhash() };
};

const getBlockHeight: RpcMethod = (params, { bank }) => {
  checkReadConfig(configParam(params[0], 'config'), bank.slot);
  return bank.blockHeight;
};

const getSlot: RpcMethod = (params, { bank }) => {
  checkReadConfig(configParam(params[0], 'config'), bank.slot);
  return bank.slot;
};

const getHealth: RpcMethod = () => 'ok';

const getVersion: RpcMethod = () => ({ 'solana-core': SOLANA_CORE_VERSION, 'feature-set': FEATURE_SET });

export const clusterMethods = { getLatestBlockhash, getBlockHeight, getSlot, getHealth, getVersion };
