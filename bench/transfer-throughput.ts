import type { Bench, BenchResult, Table } from './report.js';
import { authorityTable, RUN_COLUMNS, runRow, runsData, type RunGroup } from './support/transfer-tables.js';
import { runTransfers, type Drive } from './support/transfer-run.js';
import type { TimingProfile } from './support/cranks.js';

/**
 * Transfer throughput on the devnet: N deposits waiting (a backlog), three in-process cranks
 * (threshold 2, the server's assembleCrank) carrying them through ack_deposit, the user's
 * claim, ack_withdraw and cleanup_deposit. Everything runs in this one Node process:
 * both chains, the three cranks and the users share one event loop, so the figures are a floor
 * for three servers on their own machines, not a ceiling.
 */

interface Config {
  deposits: number;
  drive: Drive;
  pollIntervalMs?: number;
  timing: TimingProfile;
}

const CONFIGS: readonly Config[] = [
  { deposits: 50, drive: 'rounds', timing: 'production' },
  { deposits: 200, drive: 'rounds', timing: 'production' },
  { deposits: 200, drive: 'rounds', timing: 'fast' },
  { deposits: 50, drive: 'timers', pollIntervalMs: 1_000, timing: 'production' },
  { deposits: 200, drive: 'timers', pollIntervalMs: 1_000, timing: 'production' },
];
const RUNS = 3;
const BUDGET_MS = 120_000;

function label(config: Config): string {
  const drive = config.drive === 'rounds' ? 'runOnce rounds' : `timers ${config.pollIntervalMs! / 1000} s`;
  return `${config.deposits} · ${drive} · ${config.timing}`;
}

async function run(signal: AbortSignal): Promise<BenchResult> {
  const groups: RunGroup[] = [];
  for (const config of CONFIGS) {
    const group: RunGroup = { label: label(config), results: [] };
    for (let i = 0; i < RUNS; i++) group.results.push(await runTransfers({ ...config, budgetMs: BUDGET_MS, signal }));
    groups.push(group);
  }
  const summary: Table = {
    title: `Transfers through all five phases (backlog drained by three cranks, threshold 2; ${RUNS} runs each)`,
    columns: [{ key: 'run', header: 'transfers · driven by · timing' }, ...RUN_COLUMNS],
    rows: groups.map((group) => ({ run: group.label, ...runRow(group) })),
    notes: [
      `Each configuration ran ${RUNS} times on a fresh devnet. Times: median (min–max) over the runs; transfers/s, p50, p95, cycles and tx landed: medians; batching, duplicate votes: over every run.`,
      'The deposits are all on the source chain when the cranks start; 3 in 4 use the normal token pair (Confirmed in full), 1 in 4 the low-limit pair (the first Confirmed in part, the rest Rejected). The users claim each Confirmed withdrawal as soon as it is claimable.',
      'runOnce rounds: the bench calls runOnce() on authorities 0, 1, 2 in turn, back to back (no poll interval, one crank at a time). timers 1 s: every crank runs on its own 1 s poll timer (BRIDGE_POLL_INTERVAL_SECS=1, the smallest setting), all three concurrently.',
      'production timing: the chain client and crank defaults (status poll 450 ms, rebroadcast 2 s, retry backoff 1 s). fast: status poll 10 ms, rebroadcast 100 ms, backoff 50 ms. Without faults a devnet transaction lands when sent and its first status poll finds it, so the two should agree.',
      "all cleaned up: from the cranks' start until every source entry is cleaned up; transfers/s = transfers / that time. all votes cast: until every authority's late votes have landed too. p50/p95: per-transfer time from the cranks' start to its cleanup (sampled every 10 ms).",
      "cycles: crank cycles run by all three authorities: the startup cycle, the bench's runOnce() calls or the timers' cycles (idle ones included), and the crank's own backlog cycles (a cycle that found more than the 64 entries per action it may plan starts the next at once). rounds: complete runOnce() rounds over the three authorities.",
      "CPU: user + system CPU time of this one process (chains, cranks, users) over the wall time of the run, in % of one core (Node's helper threads, such as the garbage collector, can take it past 100 %); near or above 100 % the one event loop is the bottleneck.",
      'tx landed: transactions each authority signed that landed. votes/tx, cleanups/tx: instructions per landed transaction (batching: a transaction holds up to about 10 ack_deposit, 27 ack_withdraw or 19 cleanup instructions within 1232 bytes).',
    ],
  };
  return {
    name: 'transfer-throughput',
    tables: [summary, authorityTable('Transactions per authority, from the chain', groups)],
    parameters: { configs: CONFIGS, runs: RUNS, budgetMs: BUDGET_MS, authorities: 3, threshold: 2 },
    failures: groups.flatMap(({ label: run, results }) => results.flatMap((result) => result.problems.map((problem) => `${run}: ${problem}`))),
    data: runsData(groups),
  };
}

export const transferThroughputBench: Bench = {
  name: 'transfer-throughput',
  description: 'transfers/s, cycles, batching and per-transfer latency of three cranks on the devnet',
  run,
};
