import { PublicKey } from '@solana/web3.js';
import type { Logger } from '../../log/logger.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { ChainSide } from '../../domain.js';
import { depositTrackerAddress, withdrawTrackerAddress } from '../pda.js';
import { createChainRpc, type ChainRpc } from '../rpc/chain-rpc.js';
import type { RpcFetch } from '../rpc/rpc-fetch.js';
import type { TrackerKind } from '../types.js';
import type { ChainEndpoint } from './read/read-state.js';
import type { TrackerRef } from './read/tracker-reader.js';

/**
 * What reaching both trackers takes, with no key: each chain's RPC client (its endpoints) and
 * its tracker. The crank's chains (./create-chain-client.ts) and the operator's reads and tools
 * (./operator-chains.ts) share it.
 */

export interface ChainEndpointsOptions {
  sourceRpcUrl: string;
  targetRpcUrl: string;
  /** Further endpoints per chain (BRIDGE_*_RPC_FALLBACK_URLS); none when absent. */
  sourceRpcFallbackUrls?: readonly string[];
  targetRpcFallbackUrls?: readonly string[];
  /** BRIDGE_RPC_MAX_SLOT_LAG; the default 128 when absent. */
  rpcMaxSlotLag?: number;
  sourceChainId: number;
  targetChainId: number;
  sourceProgramId: PublicKey;
  targetProgramId: PublicKey;
  rpcTimeoutMs: number;
  metrics: Metrics;
}

/** The same settings as configured (program ids in base58): CrankConfig fits. */
export type ChainEndpointsConfig = Omit<ChainEndpointsOptions, 'sourceProgramId' | 'targetProgramId' | 'metrics'> & {
  sourceProgramId: string;
  targetProgramId: string;
};

export function endpointsOptions(config: ChainEndpointsConfig, metrics: Metrics): ChainEndpointsOptions {
  return {
    sourceRpcUrl: config.sourceRpcUrl,
    targetRpcUrl: config.targetRpcUrl,
    ...(config.sourceRpcFallbackUrls === undefined ? {} : { sourceRpcFallbackUrls: config.sourceRpcFallbackUrls }),
    ...(config.targetRpcFallbackUrls === undefined ? {} : { targetRpcFallbackUrls: config.targetRpcFallbackUrls }),
    ...(config.rpcMaxSlotLag === undefined ? {} : { rpcMaxSlotLag: config.rpcMaxSlotLag }),
    sourceChainId: config.sourceChainId,
    targetChainId: config.targetChainId,
    sourceProgramId: new PublicKey(config.sourceProgramId),
    targetProgramId: new PublicKey(config.targetProgramId),
    rpcTimeoutMs: config.rpcTimeoutMs,
    metrics,
  };
}

/** The RPC client and tracker of each chain. */
export function chainEndpoints(options: ChainEndpointsOptions, fetch?: RpcFetch, logger?: Logger): { source: ChainEndpoint; target: ChainEndpoint } {
  const { metrics, sourceChainId, targetChainId, sourceProgramId, targetProgramId } = options;
  const rpcFor = (chain: ChainSide, url: string, fallbackUrls: readonly string[] = []): ChainRpc =>
    createChainRpc({
      chain,
      url,
      fallbackUrls,
      timeoutMs: options.rpcTimeoutMs,
      metrics,
      ...(options.rpcMaxSlotLag === undefined ? {} : { maxSlotLag: options.rpcMaxSlotLag }),
      ...(fetch === undefined ? {} : { fetch }),
      ...(logger === undefined ? {} : { logger: logger.child({ chain }) }),
    });
  const trackerRef = (chain: ChainSide, kind: TrackerKind, address: PublicKey, programId: PublicKey): TrackerRef => ({
    chain,
    kind,
    address,
    account: address.toBase58(),
    programId,
    sourceChainId,
    targetChainId,
  });
  return {
    source: {
      rpc: rpcFor('source', options.sourceRpcUrl, options.sourceRpcFallbackUrls),
      tracker: trackerRef('source', 'DepositTracker', depositTrackerAddress(sourceProgramId, targetChainId), sourceProgramId),
    },
    target: {
      rpc: rpcFor('target', options.targetRpcUrl, options.targetRpcFallbackUrls),
      tracker: trackerRef('target', 'WithdrawTracker', withdrawTrackerAddress(targetProgramId, sourceChainId), targetProgramId),
    },
  };
}
