import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { AGAVE_COMMITMENT_LAGS, type CommitmentLags } from '../../../devnet/bank/commitment-banks.js';
import { startChainPair, type ChainPair } from '../../../devnet/chain-pair.js';
import { bootstrapWorld, type World } from '../../../devnet/world/bootstrap.js';
import { loadKeypairFile } from '../../../devnet/world/keypair-files.js';
import { inSetupSlots } from '../../support/setup-slots.js';

/**
 * A bridge on the devnet as an integration test needs it: a chain pair on free ports, a world
 * bootstrapped through real transactions (three authorities, threshold 2, four token pairs),
 * the world's keypairs loaded, and a funded user. `close()` stops what the test started on it
 * (cranks, HTTP apps), then the chains, then removes the keypair directory.
 */

export interface DevnetBridge {
  pair: ChainPair;
  world: World;
  programId: PublicKey;
  depositTracker: PublicKey;
  withdrawTracker: PublicKey;
  /** The world's authority keypairs, slot k = authority k (bit k of every vote mask). */
  authorities: Keypair[];
  governance: Keypair;
  /** Deposits and claims (withdraw) are signed by this funded key. */
  user: Keypair;
  /** Runs at close, before the chains close, last registered first. */
  onClose(cleanup: () => Promise<void>): void;
  close(): Promise<void>;
}

const AUTHORITY_COUNT = 3;
const THRESHOLD = 2;
const USER_LAMPORTS = 100n * BigInt(LAMPORTS_PER_SOL);
/**
 * The suite's slot where timing is not the point: Agave's lags are kept in slots (2 and 32), so
 * waiting for finality takes 32 of these (0.64 s) after every round that acted, and a blockhash
 * lives 151 (3 s). A test whose point is timing passes its own (production's 400 ms, or 10 ms for
 * blockhash expiries).
 */
const SUITE_SLOT_MS = 20;

/**
 * The devnet's commitment banks for the suite: the option, else DEVNET_COMMITMENT_LAGS as
 * "confirmed,finalized" slots ("0,0": one bank for every commitment, as the suite ran before the
 * devnet had banks), else Agave's.
 */
function suiteCommitmentLags(option?: CommitmentLags): CommitmentLags {
  if (option !== undefined) return option;
  const given = process.env['DEVNET_COMMITMENT_LAGS'];
  if (given === undefined || given === '') return AGAVE_COMMITMENT_LAGS;
  const match = /^(\d+),(\d+)$/.exec(given);
  if (match === null)
    throw new Error(
      `DEVNET_COMMITMENT_LAGS must be "confirmed,finalized" slots, e.g. "2,32" (Agave's, the default) or "0,0"; got ${JSON.stringify(given)}`,
    );
  return { confirmedLagSlots: Number(match[1]), finalizedLagSlots: Number(match[2]) };
}

export async function startDevnetBridge(
  options: { capacity?: number; slotIntervalMs?: number; commitmentLags?: CommitmentLags } = {},
): Promise<DevnetBridge> {
  // A block holds what arrives within its slot; the timer moves slots (and the banks behind the
  // head) and keeps blockhashes ageing.
  const pair = await startChainPair({
    slotIntervalMs: options.slotIntervalMs ?? SUITE_SLOT_MS,
    commitmentLags: suiteCommitmentLags(options.commitmentLags),
  });
  const dir = await mkdtemp(join(tmpdir(), 'bridge-integration-'));
  const cleanups: Array<() => Promise<void>> = [];
  const closeAll = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await pair.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const world = await inSetupSlots(pair, () =>
      bootstrapWorld(pair, { authorities: AUTHORITY_COUNT, threshold: THRESHOLD, capacity: options.capacity ?? 256, dir }),
    );
    const authorities = await Promise.all(world.authorities.map((authority) => loadKeypairFile(authority.keypairPath)));
    const governance = await loadKeypairFile(world.governance.keypairPath);
    const user = Keypair.generate();
    pair.source.airdrop(user.publicKey, USER_LAMPORTS);
    pair.target.airdrop(user.publicKey, USER_LAMPORTS);
    // The user's first transaction is preflighted on the confirmed bank: the airdrops must be there.
    pair.source.advanceSlots(pair.source.bank.commitmentLags.confirmedLagSlots);
    pair.target.advanceSlots(pair.target.bank.commitmentLags.confirmedLagSlots);
    return {
      pair,
      world,
      programId: new PublicKey(world.programId),
      depositTracker: new PublicKey(world.source.depositTracker),
      withdrawTracker: new PublicKey(world.target.withdrawTracker),
      authorities,
      governance,
      user,
      onClose: (cleanup) => void cleanups.push(cleanup),
      close: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
