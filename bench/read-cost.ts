/**
 * Read cost of BridgeChains.readState against the devnet: account bytes and latency per read,
 * for trackers of growing size holding the same 10 pending deposits, next to what reading the
 * whole tracker account would cost. Prints a table and writes bench/results/read-cost.json.
 * Informational only: nothing here gates CI.
 *
 *   npx tsx bench/read-cost.ts
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Keypair, PublicKey } from '@solana/web3.js';
import { Registry } from 'prom-client';
import { createBridgeChains } from '../src/chain/client/index.js';
import { depositInstruction } from '../src/chain/codec/builders.js';
import { trackerAccountSize } from '../src/chain/codec/layout.js';
import { startChainPair } from '../src/devnet/chain-pair.js';
import { bootstrapWorld } from '../src/devnet/world/bootstrap.js';
import { readKeypairFile } from '../src/devnet/world/keypair-files.js';
import { devnetConnection, submitTransaction } from '../src/devnet/world/submit.js';
import { createLogger } from '../src/log/logger.js';
import { createMetrics, type Metrics } from '../src/metrics/metrics.js';

const CAPACITIES = [1_000, 10_000, 50_000];
const PENDING = 10;
const READS = 20;

export interface ReadCostRow {
  capacity: number;
  settled: number;
  pending: number;
  sourceBytesPerRead: number;
  targetBytesPerRead: number;
  wholeAccountsBytes: number;
  medianReadMs: number;
}

export async function measureReadCost(capacity: number): Promise<ReadCostRow> {
  const settled = capacity - PENDING - 10;
  const pair = await startChainPair({ slotIntervalMs: 5 });
  const dir = await mkdtemp(join(tmpdir(), 'bench-read-cost-'));
  try {
    const world = await bootstrapWorld(pair, { authorities: 3, threshold: 2, capacity, dir });
    pair.seedSettledDeposits(settled);
    await addDeposits(pair.source.url, world.programId, world.source.depositTracker, world.tokenPairs.normal.sourceMint, (key) =>
      pair.source.airdrop(key, 1_000_000_000),
    );
    const authority = await readKeypairFile(world.authorities[0]!.keypairPath);
    if (authority === undefined) throw new Error(`no keypair file at ${world.authorities[0]!.keypairPath}`);
    const metrics = createMetrics(new Registry());
    const programId = new PublicKey(world.programId);
    const chains = createBridgeChains({
      sourceRpcUrl: pair.source.url,
      targetRpcUrl: pair.target.url,
      sourceChainId: world.source.chainId,
      targetChainId: world.target.chainId,
      sourceProgramId: programId,
      targetProgramId: programId,
      authority,
      rpcTimeoutMs: 10_000,
      sourceReadCommitment: 'finalized',
      metrics,
      logger: createLogger({ level: 'silent' }),
    });
    const durations: number[] = [];
    for (let i = 0; i < READS; i++) {
      const begin = performance.now();
      await chains.readState(new AbortController().signal);
      durations.push(performance.now() - begin);
    }
    return {
      capacity,
      settled,
      pending: PENDING,
      sourceBytesPerRead: await lastReadBytes(metrics, 'source'),
      targetBytesPerRead: await lastReadBytes(metrics, 'target'),
      wholeAccountsBytes: trackerAccountSize('DepositTracker', capacity) + trackerAccountSize('WithdrawTracker', capacity),
      medianReadMs: median(durations),
    };
  } finally {
    await pair.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function addDeposits(url: string, programId: string, depositTracker: string, mint: string, fund: (key: PublicKey) => void) {
  const depositor = Keypair.generate();
  fund(depositor.publicKey);
  const signal = new AbortController().signal;
  const connection = devnetConnection(url, signal);
  for (let i = 0; i < PENDING; i++) {
    const ix = depositInstruction({
      programId: new PublicKey(programId),
      depositor: depositor.publicKey,
      depositTracker: new PublicKey(depositTracker),
      amount: 1_000n,
      recipient: Keypair.generate().publicKey.toBase58(),
      sourceMint: mint,
    });
    await submitTransaction(connection, [ix], [depositor], { chain: 'source', step: 'deposit', signal });
  }
}

async function lastReadBytes(metrics: Metrics, chain: 'source' | 'target'): Promise<number> {
  const { values } = await metrics.lastCycleAccountBytes.get();
  return values.find((value) => value.labels.chain === chain)?.value ?? Number.NaN;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function main(): Promise<void> {
  const rows: ReadCostRow[] = [];
  for (const capacity of CAPACITIES) rows.push(await measureReadCost(capacity));
  console.table(
    rows.map((row) => ({
      'tracker capacity': row.capacity,
      'settled entries': row.settled,
      pending: row.pending,
      'source bytes/read': row.sourceBytesPerRead,
      'destination bytes/read': row.targetBytesPerRead,
      'whole accounts (bytes)': row.wholeAccountsBytes,
      'median readState (ms)': Number(row.medianReadMs.toFixed(2)),
    })),
  );
  const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'read-cost.json');
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, `${JSON.stringify({ measuredAt: new Date().toISOString(), node: process.version, reads: READS, rows }, null, 2)}\n`);
  console.log(`wrote ${out}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
