import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeDepositEntry, decodeTrackerHeader, decodeWithdrawEntry } from '../../src/chain/codec/accounts.js';
import { ackDepositInstruction } from '../../src/chain/codec/builders.js';
import { depositInstruction } from '../../devnet/instructions.js';
import { entryOffset } from '../../src/chain/codec/layout.js';
import { tokenPairAddress } from '../../src/chain/pda.js';
import { parseTransaction } from '../../devnet/bank/transaction.js';
import { startChainPair, type ChainPair } from '../../devnet/chain-pair.js';
import { bootstrapWorld, type World } from '../../devnet/world/bootstrap.js';
import { readKeypairFile } from '../../devnet/world/keypair-files.js';
import { isDevnetError } from '../../devnet/devnet-error.js';

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function started(): Promise<ChainPair> {
  const pair = await startChainPair({ slotIntervalMs: 0 });
  cleanups.push(() => pair.close());
  return pair;
}

async function bootstrapped(capacity: number): Promise<{ pair: ChainPair; world: World }> {
  const pair = await started();
  const dir = await mkdtemp(join(tmpdir(), 'devnet-seed-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return { pair, world: await bootstrapWorld(pair, { authorities: 3, threshold: 2, capacity, dir }) };
}

/** Milliseconds per landed deposit (signatures pre-verified) on a tracker of `capacity` holding `seeded` entries. */
async function depositCost(capacity: number, seeded: number): Promise<number> {
  const { pair, world } = await bootstrapped(capacity);
  pair.seedSettledDeposits(seeded);
  const depositor = Keypair.generate();
  pair.source.airdrop(depositor.publicKey, 1_000_000_000);
  const bank = pair.source.bank;
  // One blockhash serves at most 150 landed transactions (each lands in its own block).
  const transactions = Array.from({ length: 100 }, () => {
    const tx = new Transaction({ feePayer: depositor.publicKey, recentBlockhash: bank.latestBlockhash().blockhash }).add(
      depositInstruction({
        programId: pair.source.programId,
        depositor: depositor.publicKey,
        depositTracker: new PublicKey(world.source.depositTracker),
        amount: 1n,
        recipient: Keypair.generate().publicKey.toBase58(),
        sourceMint: world.tokenPairs.normal.sourceMint,
      }),
    );
    tx.sign(depositor);
    return parseTransaction(tx.serialize());
  });
  const begin = performance.now();
  for (const tx of transactions) bank.submit(tx, true);
  const perTransactionMs = (performance.now() - begin) / transactions.length;
  const header = decodeTrackerHeader(pair.source.getAccount(world.source.depositTracker)!.data, 'DepositTracker', 'test');
  expect(header.entryCount).toBe(BigInt(seeded + transactions.length));
  return perTransactionMs;
}

describe('seedSettledDeposits', () => {
  it('builds 50,000 settled transfers on both chains quickly; the bridge goes on from there', async () => {
    const { pair, world } = await bootstrapped(50_010);
    const started = performance.now();
    pair.seedSettledDeposits(50_000, { amount: 7n });
    const seedMs = performance.now() - started;
    expect(seedMs).toBeLessThan(5_000);

    const deposits = decodeTrackerHeader(pair.source.getAccount(world.source.depositTracker)!.data, 'DepositTracker', 'test');
    const withdrawals = decodeTrackerHeader(pair.target.getAccount(world.target.withdrawTracker)!.data, 'WithdrawTracker', 'test');
    for (const header of [deposits, withdrawals]) {
      expect(header).toMatchObject({ entryCount: 50_000n, settledPrefix: 50_000n });
      expect(header.votes).toEqual(Array.from({ length: 3 }, () => ({ nextIndex: 50_000n, lastVote: 'Yes' })));
    }
    const sourceData = pair.source.getAccount(world.source.depositTracker)!.data;
    const last = entryOffset('DepositTracker', 49_999);
    expect(decodeDepositEntry(sourceData.subarray(last, last + 160), 'test', 49_999)).toMatchObject({
      amount: 7n,
      status: 'Finalized',
      cleanupCompleted: true,
      result: { kind: 'Confirmed', amount: 7n },
    });
    const targetData = pair.target.getAccount(world.target.withdrawTracker)!.data;
    const lastWithdraw = entryOffset('WithdrawTracker', 49_999);
    expect(decodeWithdrawEntry(targetData.subarray(lastWithdraw, lastWithdraw + 144), 'test', 49_999)).toMatchObject({
      status: 'Finalized',
      createdTokenAccount: 'Created',
      result: { kind: 'Confirmed', amount: 7n },
    });

    // Entry 50,000 is an ordinary deposit, proposed by authority 0 at its next_index.
    const depositor = Keypair.generate();
    pair.source.airdrop(depositor.publicKey, 1_000_000_000);
    const mint = new PublicKey(world.tokenPairs.normal.sourceMint);
    const recipient = Keypair.generate().publicKey.toBase58();
    const source = new Connection(pair.source.url, 'confirmed');
    await source.sendRawTransaction(
      await signed(source, depositor, [
        depositInstruction({
          programId: pair.source.programId,
          depositor: depositor.publicKey,
          depositTracker: new PublicKey(world.source.depositTracker),
          amount: 9n,
          recipient,
          sourceMint: mint.toBase58(),
        }),
      ]),
    );
    const authority = (await readKeypairFile(world.authorities[0]!.keypairPath))!;
    const target = new Connection(pair.target.url, 'confirmed');
    await target.sendRawTransaction(
      await signed(target, authority, [
        ackDepositInstruction({
          programId: pair.target.programId,
          authority: authority.publicKey,
          withdrawTracker: new PublicKey(world.target.withdrawTracker),
          tokenPair: tokenPairAddress(pair.target.programId, 1, mint),
          index: 50_000n,
          approve: true,
          amount: 9n,
          recipient,
          sourceMint: mint.toBase58(),
        }),
      ]),
    );
    expect(decodeTrackerHeader(pair.target.getAccount(world.target.withdrawTracker)!.data, 'WithdrawTracker', 'test').entryCount).toBe(50_001n);
  });

  it('lands a transaction on an 8 MB tracker as fast as on a small one: nothing is copied per transaction', async () => {
    const small = await depositCost(200, 0);
    const large = await depositCost(50_000, 49_000);
    // Copying the 8 MB tracker once per transaction would cost several milliseconds (measured: ~7 ms).
    expect(large).toBeLessThan(small * 3 + 0.5);
  });

  it('refuses to seed unsettled or missing trackers', async () => {
    const pair = await started();
    const missing = (() => {
      try {
        pair.seedSettledDeposits(1);
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(isDevnetError(missing, 'DEVNET__INVALID_STATE')).toBe(true);

    const { pair: seeded, world: w } = await bootstrapped(16);
    const depositor = Keypair.generate();
    seeded.source.airdrop(depositor.publicKey, 1_000_000_000);
    const source = new Connection(seeded.source.url, 'confirmed');
    await source.sendRawTransaction(
      await signed(source, depositor, [
        depositInstruction({
          programId: seeded.source.programId,
          depositor: depositor.publicKey,
          depositTracker: new PublicKey(w.source.depositTracker),
          amount: 1n,
          recipient: depositor.publicKey.toBase58(),
          sourceMint: w.tokenPairs.normal.sourceMint,
        }),
      ]),
    );
    expect(() => seeded.seedSettledDeposits(1)).toThrow(/unsettled/);
    expect(() => seeded.seedSettledDeposits(100)).toThrow();
  });
});

async function signed(connection: Connection, payer: Keypair, instructions: Parameters<Transaction['add']>): Promise<Buffer> {
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: (await connection.getLatestBlockhash()).blockhash }).add(...instructions);
  tx.sign(payer);
  return tx.serialize();
}
