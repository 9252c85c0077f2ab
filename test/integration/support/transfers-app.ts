import type { PublicKey } from '@solana/web3.js';
import { Registry } from 'prom-client';
import { createOperatorReads } from '../../../src/chain/client/operator-chains.js';
import { createTransferQueries } from '../../../src/transfers/transfer-queries.js';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { startTestApp, type TestApp, type TestAppOptions } from '../../support/http-app.js';
import type { DevnetBridge } from './devnet-bridge.js';

/** What GET /transfers reads: each chain's RPC URL and id, and the program (the same address on both). */
export interface TransferChains {
  sourceRpcUrl: string;
  targetRpcUrl: string;
  sourceChainId: number;
  targetChainId: number;
  programId: PublicKey;
}

export function bridgeTransferChains(b: DevnetBridge): TransferChains {
  return {
    sourceRpcUrl: b.pair.source.url,
    targetRpcUrl: b.pair.target.url,
    sourceChainId: b.world.source.chainId,
    targetChainId: b.world.target.chainId,
    programId: b.programId,
  };
}

export interface TransfersAppOptions extends Omit<TestAppOptions, 'transfers' | 'metrics'> {
  /** BRIDGE_RPC_TIMEOUT_MS of the reads; 5 s unless set. */
  rpcTimeoutMs?: number;
}

/** The app serving GET /transfers from real reads of `chains` (its routes share them between requests), their RPC calls counted in the app's metrics. */
export async function startTransfersApp(chains: TransferChains, options: TransfersAppOptions): Promise<TestApp> {
  const { rpcTimeoutMs = 5_000, ...appOptions } = options;
  const metrics = createMetrics(new Registry());
  const reads = createOperatorReads({
    sourceRpcUrl: chains.sourceRpcUrl,
    targetRpcUrl: chains.targetRpcUrl,
    sourceChainId: chains.sourceChainId,
    targetChainId: chains.targetChainId,
    sourceProgramId: chains.programId,
    targetProgramId: chains.programId,
    rpcTimeoutMs,
    metrics,
  });
  return startTestApp({ ...appOptions, transfers: createTransferQueries(reads.readRange), metrics });
}
