import type { PriorityFeeBounds } from '../../src/chain/client/priority-fee.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PublicKey, type Keypair } from '@solana/web3.js';
import type { BridgeChains } from '../../src/chain/bridge-chains.js';
import { createBridgeChains, type BridgeChainsTuning } from '../../src/chain/client/index.js';
import { FileKeySigner } from '../../src/chain/client/native-signer.js';
import { startChainPair, type ChainPair } from '../../devnet/chain-pair.js';
import { bootstrapWorld, type World } from '../../devnet/world/bootstrap.js';
import { loadKeypairFile } from '../../devnet/world/keypair-files.js';
import type { Logger } from '../../src/log/logger.js';
import type { Metrics } from '../../src/metrics/metrics.js';

/**
 * A bridge on the devnet as the benches need it: a chain pair on 127.0.0.1 free ports, a world
 * bootstrapped through real transactions (three authorities, threshold 2), its authority
 * keypairs, and one close() that stops the chains and removes the keypair directory.
 */

const AUTHORITIES = 3;
const THRESHOLD = 2;
/** The production default RPC timeout (BRIDGE_RPC_TIMEOUT_MS). */
export const RPC_TIMEOUT_MS = 10_000;

export interface BenchWorld {
  pair: ChainPair;
  world: World;
  programId: PublicKey;
  authorities: Keypair[];
  close(): Promise<void>;
}

export interface BenchWorldOptions {
  capacity: number;
  /** Milliseconds per slot; the devnet default (400) is a cluster's pace. */
  slotIntervalMs?: number;
  signal: AbortSignal;
}

export async function startBenchWorld(options: BenchWorldOptions): Promise<BenchWorld> {
  const pair = await startChainPair({ slotIntervalMs: options.slotIntervalMs ?? 400, signal: options.signal });
  const dir = await mkdtemp(join(tmpdir(), 'bridge-bench-'));
  const close = async () => {
    await pair.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const world = await bootstrapWorld(pair, { authorities: AUTHORITIES, threshold: THRESHOLD, capacity: options.capacity, dir, signal: options.signal });
    const authorities = await Promise.all(world.authorities.map((authority) => loadKeypairFile(authority.keypairPath)));
    return { pair, world, programId: new PublicKey(world.programId), authorities, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** BRIDGE_PRIORITY_FEE_MIN/MAX_MICROLAMPORTS's defaults. */
const DEFAULT_PRIORITY_FEE: PriorityFeeBounds = { minMicroLamports: 0, maxMicroLamports: 100_000 };

/** The chain client of authority `slot`, configured as src/index.ts configures it from the defaults. */
export function bridgeChainsFor(
  bench: BenchWorld,
  slot: number,
  metrics: Metrics,
  logger: Logger,
  tuning: BridgeChainsTuning = {},
  { deadPrimaryUrl, priorityFee = DEFAULT_PRIORITY_FEE }: { deadPrimaryUrl?: string | undefined; priorityFee?: PriorityFeeBounds | undefined } = {},
): BridgeChains {
  // With a dead primary, the devnet node is each chain's fallback endpoint.
  const endpoints = (url: string) =>
    deadPrimaryUrl === undefined ? { primary: url, fallbacks: [] } : { primary: deadPrimaryUrl, fallbacks: [url] };
  const source = endpoints(bench.pair.source.url);
  const target = endpoints(bench.pair.target.url);
  return createBridgeChains(
    {
      sourceRpcUrl: source.primary,
      targetRpcUrl: target.primary,
      sourceRpcFallbackUrls: source.fallbacks,
      targetRpcFallbackUrls: target.fallbacks,
      sourceChainId: bench.world.source.chainId,
      targetChainId: bench.world.target.chainId,
      sourceProgramId: bench.programId,
      targetProgramId: bench.programId,
      signer: new FileKeySigner(bench.authorities[slot]!),
      rpcTimeoutMs: RPC_TIMEOUT_MS,
      sourceReadCommitment: 'finalized',
      priorityFee,
      metrics,
      logger,
    },
    tuning,
  );
}
