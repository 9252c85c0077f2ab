/**
 * Read cost of BridgeChains.readState against the devnet: account bytes and latency per read,
 * for trackers of growing size holding the same 10 pending deposits, next to what reading the
 * whole tracker accounts would cost. `npm run bench -- read-cost`.
 */
import { Registry } from 'prom-client';
import { NO_COMMITMENT_LAGS } from '../devnet/bank/commitment-banks.js';
import { assembleBridgeChains } from '../src/assemble-crank.js';
import { trackerAccountSize } from '../src/chain/codec/layout.js';
import { MAX_PLANNED_PER_ACTION, readLimitsFor } from '../src/machines/planning/cycle-plan.js';
import { createLogger } from '../src/log/logger.js';
import { createMetrics, type Metrics } from '../src/metrics/metrics.js';
import { percentile, type Bench, type BenchResult } from './report.js';
import { benchCrankParts, startBenchWorld } from './support/bench-world.js';
import { deposit, fundUsers } from './support/users.js';

const CAPACITIES = [1_000, 10_000, 50_000];
const PENDING = 10;
const READS = 20;
/** Entries left free past the pending ones. */
const FREE = 10;

export interface ReadCostRow {
  capacity: number;
  settled: number;
  pending: number;
  sourceBytesPerRead: number;
  targetBytesPerRead: number;
  wholeAccountsBytes: number;
  medianReadMs: number;
  p95ReadMs: number;
}

export interface ReadCostOptions {
  reads?: number;
  signal?: AbortSignal;
}

/** A tracker pair of `capacity` entries, all settled but the last 10 deposits (and 10 free). */
export async function measureReadCost(capacity: number, options: ReadCostOptions = {}): Promise<ReadCostRow> {
  const signal = options.signal ?? new AbortController().signal;
  const reads = options.reads ?? READS;
  const settled = capacity - PENDING - FREE;
  // One bank: the bench measures what a read of a given state costs, so every read must see the
  // same 10 pending deposits, not a finalized bank that has not reached them yet.
  const bench = await startBenchWorld({ capacity, slotIntervalMs: 5, commitmentLags: NO_COMMITMENT_LAGS, signal });
  try {
    bench.pair.seedSettledDeposits(settled);
    const [user] = fundUsers(bench, 1);
    for (let i = 0; i < PENDING; i++) await deposit(bench, user!, { amount: 1_000n, sourceMint: bench.world.tokenPairs.normal.sourceMint }, signal);
    const metrics = createMetrics(new Registry());
    const chains = assembleBridgeChains({ ...benchCrankParts(bench, 0, {}), metrics, logger: createLogger({ level: 'silent' }) });
    const durations: number[] = [];
    for (let i = 0; i < reads; i++) {
      const begin = performance.now();
      await chains.readState(signal, readLimitsFor(MAX_PLANNED_PER_ACTION));
      durations.push(performance.now() - begin);
    }
    return {
      capacity,
      settled,
      pending: PENDING,
      sourceBytesPerRead: await lastReadBytes(metrics, 'source'),
      targetBytesPerRead: await lastReadBytes(metrics, 'target'),
      wholeAccountsBytes: trackerAccountSize('DepositTracker', capacity) + trackerAccountSize('WithdrawTracker', capacity),
      medianReadMs: percentile(durations, 50),
      p95ReadMs: percentile(durations, 95),
    };
  } finally {
    await bench.close();
  }
}

async function lastReadBytes(metrics: Metrics, chain: 'source' | 'target'): Promise<number> {
  const { values } = await metrics.lastCycleAccountBytes.get();
  return values.find((value) => value.labels.chain === chain)?.value ?? Number.NaN;
}

async function run(signal: AbortSignal): Promise<BenchResult> {
  const rows: ReadCostRow[] = [];
  for (const capacity of CAPACITIES) rows.push(await measureReadCost(capacity, { signal }));
  const varying = new Set(rows.map((row) => row.sourceBytesPerRead + row.targetBytesPerRead)).size > 1;
  return {
    name: 'read-cost',
    parameters: { capacities: CAPACITIES, pending: PENDING, reads: READS },
    failures: varying ? ['bytes per readState differ between tracker sizes with the same pending work'] : [],
    tables: [
      {
        title: `readState cost vs tracker size (${PENDING} pending deposits, ${READS} reads each)`,
        columns: [
          { key: 'capacity', header: 'tracker capacity' },
          { key: 'settled', header: 'settled entries' },
          { key: 'pending', header: 'pending' },
          { key: 'sourceBytesPerRead', header: 'source bytes/read' },
          { key: 'targetBytesPerRead', header: 'destination bytes/read' },
          { key: 'wholeAccountsBytes', header: 'whole accounts (bytes)' },
          { key: 'medianReadMs', header: 'median readState (ms)', digits: 2 },
          { key: 'p95ReadMs', header: 'p95 readState (ms)', digits: 2 },
        ],
        rows: rows.map((row) => ({ ...row })),
        notes: [
          'Bytes: tracker account data one readState fetched (bridge_chain_last_read_account_bytes): headers plus the window of entries that can still need work. Source: two 848-byte headers (finalized data, confirmed positions) and the 10 pending 160-byte entries; destination: its header only, as no authority has acknowledged the pending deposits yet. Whole accounts: what reading both tracker accounts in full would transfer.',
          'Latency: wall time of one readState (headers, balances and windows on both chains, over HTTP to the devnet on 127.0.0.1).',
        ],
      },
    ],
  };
}

export const readCostBench: Bench = {
  name: 'read-cost',
  description: 'bytes and latency of readState vs tracker size (1k/10k/50k entries, 10 pending)',
  run,
};
