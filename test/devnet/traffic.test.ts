import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PublicKey, type Keypair } from '@solana/web3.js';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { decodeDepositEntries, decodeTrackerHeader, decodeWithdrawEntries } from '../../src/chain/codec/accounts.js';
import { ackDepositInstruction } from '../../src/chain/codec/builders.js';
import { entryOffset } from '../../src/chain/codec/layout.js';
import { tokenPairAddress } from '../../src/chain/pda.js';
import type { DepositEntry, WithdrawEntry } from '../../src/chain/types.js';
import { startChainPair, type ChainPair } from '../../devnet/chain-pair.js';
import { formatSummary, summarizeTransfers } from '../../devnet/summary.js';
import { startTraffic } from '../../devnet/traffic.js';
import { bootstrapWorld, type World } from '../../devnet/world/bootstrap.js';
import { readKeypairFile } from '../../devnet/world/keypair-files.js';
import { devnetConnection, submitTransaction } from '../../devnet/world/submit.js';

let pair: ChainPair;
let world: World;
let dir: string;

beforeEach(async () => {
  pair = await startChainPair({ slotIntervalMs: 0 });
  dir = await mkdtemp(join(tmpdir(), 'devnet-traffic-'));
  world = await bootstrapWorld(pair, { authorities: 2, threshold: 2, capacity: 256, dir });
});

afterEach(async () => {
  await pair.close();
  await rm(dir, { recursive: true, force: true });
});

function deposits(): DepositEntry[] {
  const data = pair.source.getAccount(world.source.depositTracker)!.data;
  const count = Number(decodeTrackerHeader(data, 'DepositTracker', 'test').entryCount);
  return decodeDepositEntries(data.subarray(entryOffset('DepositTracker', 0), entryOffset('DepositTracker', count)), 'test', 0);
}

function withdrawals(): WithdrawEntry[] {
  const data = pair.target.getAccount(world.target.withdrawTracker)!.data;
  const count = Number(decodeTrackerHeader(data, 'WithdrawTracker', 'test').entryCount);
  return decodeWithdrawEntries(data.subarray(entryOffset('WithdrawTracker', 0), entryOffset('WithdrawTracker', count)), 'test', 0);
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Both authorities vote yes on the given source entries: the destination finalizes them. */
async function finalizeOnTarget(entries: DepositEntry[]): Promise<void> {
  const signal = new AbortController().signal;
  const connection = devnetConnection(pair.target.url, signal);
  for (const path of world.authorities.map((a) => a.keypairPath)) {
    const authority = (await readKeypairFile(path)) as Keypair;
    const votes = entries.map((entry, index) =>
      ackDepositInstruction({
        programId: pair.target.programId,
        authority: authority.publicKey,
        withdrawTracker: new PublicKey(world.target.withdrawTracker),
        tokenPair: tokenPairAddress(pair.target.programId, world.source.chainId, new PublicKey(entry.sourceMint)),
        index: BigInt(index),
        approve: true,
        amount: entry.amount,
        recipient: entry.recipient,
        sourceMint: entry.sourceMint,
      }),
    );
    await submitTransaction(connection, votes, [authority], { chain: 'target', step: 'test votes', signal });
  }
}

it('deposits at a bounded rate and claims Confirmed + Pending withdrawals; stop() ends it', async () => {
  const errors: unknown[] = [];
  const began = Date.now();
  const traffic = startTraffic(pair, world, { depositsPerSecond: 20, claimDelayMs: 100, seed: 3, onError: (err) => errors.push(err) });
  await until(() => deposits().length >= 6, 'six deposits');
  const started = deposits().slice(0, 6);
  await finalizeOnTarget(started);
  const confirmed = withdrawals().filter((entry) => entry.result.kind === 'Confirmed').length;
  expect(confirmed).toBeGreaterThan(0);
  // The claim lands on chain before the generator counts it: wait for both.
  await until(
    () => withdrawals().filter((entry) => entry.createdTokenAccount === 'Created').length === confirmed && traffic.stats().claims === confirmed,
    'every confirmed withdrawal claimed and counted',
  );
  await traffic.stop();
  const elapsedMs = Date.now() - began;
  const stats = traffic.stats();
  expect(errors).toEqual([]);
  expect(stats.claims).toBe(confirmed);
  expect(stats.deposits).toBe(deposits().length);
  // One deposit per 50 ms tick at most, and nothing after stop().
  expect(stats.deposits).toBeLessThanOrEqual(Math.ceil(elapsedMs / 50) + 1);
  const after = deposits().length;
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(deposits().length).toBe(after);

  const summary = summarizeTransfers(pair, world);
  expect(summary).toMatchObject({ deposited: after, confirmed, claimed: confirmed, relayed: 0, cleanedUp: 0 });
  expect(summary.confirmed + summary.rejected).toBe(6);
  expect(formatSummary(summary)).toBe(
    `deposited ${after} · withdraw finalized ${confirmed} Confirmed / ${summary.rejected} Rejected · claimed ${confirmed} · relayed 0 · cleaned up 0`,
  );
});

it('under congestion, users bid the chain floor and their deposits land paying it', async () => {
  pair.source.faults.set({ priceFloor: 20_000 });
  const errors: unknown[] = [];
  const traffic = startTraffic(pair, world, { depositsPerSecond: 20, seed: 5, onError: (err) => errors.push(err) });
  await until(() => deposits().length >= 3, 'three deposits under a 20,000 micro-lamport floor');
  await traffic.stop();
  expect(errors).toEqual([]);
  const landed = [...pair.source.bank.landedTransactions()].filter((tx) => tx.computeUnitPrice > 0n);
  expect(landed.length).toBe(deposits().length);
  // A deposit and a price instruction: the default limit is 203,000 CU, 4,060 lamports at 20,000 micro-lamports.
  expect(landed.every((tx) => tx.computeUnitPrice === 20_000n && tx.priorityFee === 4_060n)).toBe(true);
});

it('a failed step is one line: the preflight message and the program error, not web3.js eleven-line dump (issue 49)', async () => {
  // A one-entry deposit tracker: after the first deposit every one is refused in preflight (TrackerFull).
  const full = await startChainPair({ slotIntervalMs: 0 });
  const fullDir = await mkdtemp(join(tmpdir(), 'devnet-traffic-full-'));
  try {
    const small = await bootstrapWorld(full, { authorities: 1, threshold: 1, capacity: 1, dir: fullDir });
    const errors: unknown[] = [];
    const traffic = startTraffic(full, small, { depositsPerSecond: 50, seed: 9, onError: (err) => errors.push(err) });
    await until(() => errors.length >= 1, 'a deposit refused by a full tracker');
    await traffic.stop();
    const message = (errors[0] as Error).message;
    expect(message).not.toContain('\n');
    expect(message).toMatch(
      /traffic deposit .* failed: preflight refused it: Transaction simulation failed: .*custom program error: 0x1777 \(Program log: AnchorError occurred\. Error Code: TrackerFull/,
    );
  } finally {
    await full.close();
    await rm(fullDir, { recursive: true, force: true });
  }
});

it('a user rebroadcasts what it has not seen land: a deposit its endpoint dropped lands once the endpoint forwards again', async () => {
  pair.source.faults.set({ forwardShare: 0 });
  const errors: unknown[] = [];
  const traffic = startTraffic(pair, world, { depositsPerSecond: 1, seed: 7, onError: (err) => errors.push(err) });
  // The first send and a rebroadcast a second later, both dropped.
  await until(() => pair.source.faults.snapshot().dropped >= 2, 'a send and a rebroadcast dropped');
  expect(deposits()).toEqual([]);
  pair.source.faults.set({ forwardShare: 1 });
  await until(() => deposits().length >= 1, 'the rebroadcast deposit');
  await traffic.stop();
  expect(errors).toEqual([]);
});
