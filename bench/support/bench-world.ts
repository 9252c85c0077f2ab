import type { PriorityFeeBounds } from '../../src/chain/client/budget/priority-fee.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PublicKey, type Keypair } from '@solana/web3.js';
import type { CrankParts } from '../../src/assemble-crank.js';
import type { CrankConfig } from '../../src/config/config.js';
import { AGAVE_COMMITMENT_LAGS, type CommitmentLags } from '../../devnet/bank/commitment-banks.js';
import { startChainPair, type ChainPair } from '../../devnet/chain-pair.js';
import { bootstrapWorld, type World } from '../../devnet/world/bootstrap.js';
import { loadKeypairFile } from '../../devnet/world/keypair-files.js';
import { authorityParts } from '../../test/support/authority.js';

/**
 * A bridge on the devnet as the benches need it: a chain pair on 127.0.0.1 free ports, a world
 * bootstrapped through real transactions (three authorities, threshold 2), its authority
 * keypairs, and one close() that stops the chains and removes the keypair directory.
 */

const AUTHORITIES = 3;
const THRESHOLD = 2;
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
  /**
   * Slots the confirmed and finalized banks trail the head: Agave's (2 and 32) by default, as
   * `npm run demo` and the suite run, so a bench's timings include what a cluster's commitments
   * cost; one bank (NO_COMMITMENT_LAGS) only for a bench about something else (read-cost).
   */
  commitmentLags?: CommitmentLags;
  signal: AbortSignal;
}

export async function startBenchWorld(options: BenchWorldOptions): Promise<BenchWorld> {
  const pair = await startChainPair({
    slotIntervalMs: options.slotIntervalMs ?? 400,
    commitmentLags: options.commitmentLags ?? AGAVE_COMMITMENT_LAGS,
    signal: options.signal,
  });
  const dir = await mkdtemp(join(tmpdir(), 'bridge-bench-'));
  const close = async () => {
    await pair.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const world = await bootstrapWorld(pair, {
      authorities: AUTHORITIES,
      threshold: THRESHOLD,
      capacity: options.capacity,
      dir,
      signal: options.signal,
    });
    const authorities = await Promise.all(world.authorities.map((authority) => loadKeypairFile(authority.keypairPath)));
    return { pair, world, programId: new PublicKey(world.programId), authorities, close };
  } catch (err) {
    await close();
    throw err;
  }
}

export interface BenchEndpoints {
  /** A dead URL to configure as each chain's primary endpoint, the devnet node as its fallback. */
  deadPrimaryUrl?: string | undefined;
  /** BRIDGE_PRIORITY_FEE_MIN/MAX_MICROLAMPORTS; the defaults when absent. */
  priorityFee?: PriorityFeeBounds | undefined;
}

/** The parts of authority `slot`'s crank: the configuration src/index.ts parses from the defaults, its key. */
export function benchCrankParts(
  bench: BenchWorld,
  slot: number,
  config: Partial<CrankConfig>,
  { deadPrimaryUrl, priorityFee }: BenchEndpoints = {},
): Pick<CrankParts, 'config' | 'signer'> {
  // With a dead primary, the devnet node is each chain's fallback endpoint.
  const endpoints =
    deadPrimaryUrl === undefined
      ? {}
      : {
          sourceRpcUrl: deadPrimaryUrl,
          targetRpcUrl: deadPrimaryUrl,
          sourceRpcFallbackUrls: [bench.pair.source.url],
          targetRpcFallbackUrls: [bench.pair.target.url],
        };
  const { config: parsed, signer } = authorityParts(bench.world, slot, bench.authorities[slot]!, {
    config: { ...endpoints, ...(priorityFee === undefined ? {} : { priorityFee }), ...config },
  });
  return { config: parsed, signer };
}
