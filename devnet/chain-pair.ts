import type { PublicKey } from '@solana/web3.js';
import type { CommitmentLags } from './bank/commitment-banks.js';
import { DEFAULT_SLOT_INTERVAL_MS, checkU16, invalidOption, startDevnetNode, type DevnetNode } from './node.js';
import { seedSettledDeposits, type SeedOptions } from './seed.js';

/** The two chains of a local bridge: source (deposits) and target (withdrawals). */

export const DEFAULT_SOURCE_CHAIN_ID = 1;
export const DEFAULT_TARGET_CHAIN_ID = 2;

export interface ChainPairOptions {
  sourceChainId?: number;
  targetChainId?: number;
  /** 0 (default) picks a free port. */
  sourcePort?: number;
  targetPort?: number;
  programId?: PublicKey | string;
  slotIntervalMs?: number;
  adminMethods?: boolean;
  /** Both chains' bridge program compute costs times this (default 1); see DevnetNodeOptions. */
  computeCostScale?: number;
  /** Both chains' confirmed and finalized lags (default none); see DevnetNodeOptions. */
  commitmentLags?: CommitmentLags;
  /** Aborting it while the chains start closes them and rejects. */
  signal?: AbortSignal;
}

export interface ChainPair {
  source: DevnetNode;
  target: DevnetNode;
  /**
   * Test and bench affordance: appends `count` settled transfers (source entries Finalized and
   * cleaned up, target entries Finalized and claimed) without transactions. Both trackers must
   * exist and be fully settled. See docs/devnet.md.
   */
  seedSettledDeposits(count: number, options?: SeedOptions): void;
  close(): Promise<void>;
}

export async function startChainPair(options: ChainPairOptions = {}): Promise<ChainPair> {
  const sourceChainId = options.sourceChainId ?? DEFAULT_SOURCE_CHAIN_ID;
  const targetChainId = options.targetChainId ?? DEFAULT_TARGET_CHAIN_ID;
  checkU16(sourceChainId, 'sourceChainId');
  checkU16(targetChainId, 'targetChainId');
  if (sourceChainId === targetChainId) throw invalidOption('targetChainId', `must differ from sourceChainId (both ${sourceChainId})`);
  const common = {
    programId: options.programId,
    slotIntervalMs: options.slotIntervalMs ?? DEFAULT_SLOT_INTERVAL_MS,
    adminMethods: options.adminMethods,
    computeCostScale: options.computeCostScale,
    commitmentLags: options.commitmentLags,
    signal: options.signal,
  };
  const source = await startDevnetNode({ ...common, name: 'source', chainId: sourceChainId, port: options.sourcePort ?? 0 });
  let target: DevnetNode;
  try {
    target = await startDevnetNode({ ...common, name: 'target', chainId: targetChainId, port: options.targetPort ?? 0 });
  } catch (err) {
    await source.close();
    throw err;
  }
  return {
    source,
    target,
    seedSettledDeposits: (count, seedOptions) => seedSettledDeposits(source, target, count, seedOptions),
    close: async () => {
      await Promise.all([source.close(), target.close()]);
    },
  };
}
