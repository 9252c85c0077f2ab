import type { Keypair } from '@solana/web3.js';
import { sleep } from '../src/time.js';
import type { Bench, BenchResult, Table } from './report.js';
import { startBenchWorld, type BenchWorld } from './support/bench-world.js';
import { startBenchCranks, stopBenchCranks } from './support/cranks.js';
import { TransferProgress } from './support/progress.js';
import {
  CONFIRMATION_MS,
  StageClock,
  STAGE_COLUMNS,
  STAGE_NOTES,
  stageRows,
  type Stage,
  type StageBanks,
  type StageLatency,
} from './support/stage-latency.js';
import { claimLoop } from './support/transfer-run.js';
import { deposit, fundUsers, type Deposit } from './support/users.js';

/**
 * What users wait: steady deposits (not a backlog) while three cranks (threshold 2) run on their
 * own poll timers with the production timing, as deployed servers do, and the users claim each
 * Confirmed withdrawal as soon as they can. Per stage (support/stage-latency.ts), the time from
 * the deposit landing to the stage seen done on the ledger, p50/p95/p99, beside the floor of the
 * setup: the phases the stage needs × (poll interval + one confirmation, the status poll).
 */

interface Config {
  pollIntervalMs: number;
  depositsPerSecond: number;
  trafficMs: number;
}

const CONFIGS: readonly Config[] = [
  { pollIntervalMs: 1_000, depositsPerSecond: 2, trafficMs: 30_000 },
  { pollIntervalMs: 5_000, depositsPerSecond: 2, trafficMs: 30_000 },
];
const USERS = 4;
const SAMPLE_INTERVAL_MS = 10;
const DRAIN_BUDGET_MS = 90_000;
const CAPACITY_MARGIN = 16;

interface LatencyRun {
  config: Config;
  deposited: number;
  stages: Record<Stage, StageLatency>;
  problems: string[];
  /** The chains' banks (bench-world's default: Agave's lags at 400 ms slots), for the floor. */
  banks: StageBanks;
}

/** Three in four on the normal pair (Confirmed, claimed by the user), one on the frozen pair (Rejected: refunded at cleanup). */
function transferOf(bench: BenchWorld, i: number): Deposit {
  const { normal, frozen } = bench.world.tokenPairs;
  return i % 4 === 3 ? { amount: 100n, sourceMint: frozen.sourceMint } : { amount: 1_000n + BigInt(i), sourceMint: normal.sourceMint };
}

async function runLatency(config: Config, signal: AbortSignal): Promise<LatencyRun> {
  const count = Math.round((config.trafficMs / 1000) * config.depositsPerSecond);
  const bench = await startBenchWorld({ capacity: count + CAPACITY_MARGIN, signal });
  const cranks = startBenchCranks(bench, { timing: 'production', pollIntervalMs: config.pollIntervalMs });
  const done = new AbortController();
  const running = AbortSignal.any([signal, done.signal]);
  try {
    const users = fundUsers(bench, USERS);
    const clock = new StageClock(bench);
    const sampling = sampleUntil(clock, count, running, AbortSignal.timeout(config.trafficMs + DRAIN_BUDGET_MS)).finally(() =>
      done.abort(new Error('drained')),
    );
    await Promise.all([
      sampling,
      claimLoop(bench, users, new TransferProgress(bench, count), running),
      depositSteadily(bench, users, config, count, running),
    ]);
    signal.throwIfAborted();
    const stages = clock.latencies();
    const problems =
      stages.cleanup.transfers < count
        ? [`${stages.cleanup.transfers} of ${count} transfers cleaned up within ${DRAIN_BUDGET_MS / 1000} s after the traffic`]
        : [];
    const banks = { slotMs: bench.pair.source.bank.slotIntervalMs, lags: bench.pair.source.bank.commitmentLags };
    return { config, deposited: count, stages, problems, banks };
  } finally {
    await stopBenchCranks(cranks);
    await bench.close();
  }
}

/** Samples the ledger until `count` transfers are cleaned up, or the budget ends. */
async function sampleUntil(clock: StageClock, count: number, signal: AbortSignal, budget: AbortSignal): Promise<void> {
  const stop = AbortSignal.any([signal, budget]);
  while (!stop.aborted) {
    clock.sample();
    if (clock.latencies().cleanup.transfers >= count) return;
    await sleep(SAMPLE_INTERVAL_MS, stop).catch(() => undefined);
  }
}

/** Deposit i lands at about i / rate seconds: each user takes every USERS-th deposit. */
async function depositSteadily(bench: BenchWorld, users: Keypair[], config: Config, count: number, signal: AbortSignal): Promise<void> {
  const started = performance.now();
  await Promise.all(
    users.map(async (user, u) => {
      for (let i = u; i < count && !signal.aborted; i += users.length) {
        const due = started + (i * 1000) / config.depositsPerSecond - performance.now();
        if (due > 0) await sleep(due, signal).catch(() => undefined);
        if (signal.aborted) return;
        await deposit(bench, user, transferOf(bench, i), signal);
      }
    }),
  );
}

function label(config: Config): string {
  return `poll ${config.pollIntervalMs / 1000} s · ${config.depositsPerSecond}/s for ${config.trafficMs / 1000} s`;
}

async function run(signal: AbortSignal): Promise<BenchResult> {
  const runs: LatencyRun[] = [];
  for (const config of CONFIGS) runs.push(await runLatency(config, signal));
  const table: Table = {
    title: 'Transfer latency per stage under steady deposits (three cranks on their own poll timers, threshold 2, production timing)',
    columns: STAGE_COLUMNS,
    rows: runs.flatMap((latencyRun) => stageRows(label(latencyRun.config), latencyRun.stages, latencyRun.config.pollIntervalMs, latencyRun.banks)),
    notes: [
      ...STAGE_NOTES,
      "Sampled every 10 ms. Three in four deposits on the normal pair (Confirmed, claimed by the bench's user within 10 ms), one in four on the frozen pair (Rejected: nothing to claim, refunded at cleanup). Chains, cranks and users share one Node process (slot time 400 ms; confirmed 2 and finalized 32 slots behind the head, as on a cluster).",
    ],
  };
  return {
    name: 'transfer-latency',
    tables: [table],
    parameters: { configs: CONFIGS, users: USERS, confirmationMs: CONFIRMATION_MS, authorities: 3, threshold: 2 },
    failures: runs.flatMap((latencyRun) => latencyRun.problems),
    data: runs,
  };
}

export const transferLatencyBench: Bench = {
  name: 'transfer-latency',
  description: 'what users wait: per-stage transfer latency p50/p95/p99 under steady deposits, beside the floor of the setup',
  run,
};
