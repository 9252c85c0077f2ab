import type { Bench, BenchResult, Table } from './report.js';
import type { TimingProfile } from './support/cranks.js';
import { describeFaults, type FaultPlan } from './support/fault-plan.js';
import {
  authorityTable,
  checkCell,
  completedCell,
  duplicateVotes,
  medianOf,
  runsData,
  secondsSpread,
  totalOf,
  type RunGroup,
} from './support/transfer-tables.js';
import { runTransfers } from './support/transfer-run.js';

/**
 * Fault recovery on the devnet: the transfer-throughput setup (a backlog of deposits, three
 * cranks, threshold 2) with faults injected on both chains, the cranks on their own 1 s poll
 * timers as deployed servers run. Measures the time to complete, the retries it took, and
 * checks from the chain that no vote landed twice; a failed check is a FAIL cell, not an
 * exception.
 */

interface Scenario {
  label: string;
  faults?: FaultPlan;
}

const DEPOSITS = 100;
const POLL_INTERVAL_MS = 1_000;
const RUNS = 3;
const BUDGET_MS = 120_000;
const TIMINGS: readonly TimingProfile[] = ['production', 'fast'];
const SCENARIOS: readonly Scenario[] = [
  { label: 'no faults' },
  { label: 'HTTP 500s', faults: { http500Rate: 0.1 } },
  { label: 'lost send responses', faults: { lostResponseRate: 0.2 } },
  { label: 'dropped transactions', faults: { dropRate: 0.2 } },
  { label: 'all three', faults: { http500Rate: 0.1, lostResponseRate: 0.2, dropRate: 0.2 } },
  { label: 'one dead endpoint of two', faults: { deadPrimary: true } },
];

interface FaultGroup extends RunGroup {
  scenario: Scenario;
  timing: TimingProfile;
}

function row({ scenario, timing, results }: FaultGroup) {
  const total = (pick: Parameters<typeof totalOf>[1]) => totalOf(results, pick);
  return {
    scenario: scenario.label,
    faults: describeFaults(scenario.faults),
    timing,
    completed: completedCell(results),
    cleanedUp: secondsSpread(results.map((result) => result.cleanedUpMs)),
    settled: secondsSpread(results.map((result) => result.settledMs)),
    p95: medianOf(results, (result) => result.latencyMs.p95) / 1000,
    lost: total((result) => result.injected.lostResponses),
    dropped: total((result) => result.injected.droppedTransactions),
    httpErrors: total((result) => result.counters.httpErrors),
    failedCycles: `${total((result) => result.counters.failedCycles)}/${total((result) => result.counters.cycles)}`,
    retries: total((result) => result.counters.retries),
    rebroadcasts: total((result) => result.counters.rebroadcasts),
    resigns: total((result) => result.counters.resigns),
    duplicateVotes: total(duplicateVotes),
    check: checkCell(results),
  };
}

async function run(signal: AbortSignal): Promise<BenchResult> {
  const groups: FaultGroup[] = [];
  for (const scenario of SCENARIOS) {
    for (const timing of TIMINGS) {
      const group: FaultGroup = { label: `${scenario.label} · ${timing}`, scenario, timing, results: [] };
      for (let i = 0; i < RUNS; i++) {
        group.results.push(
          await runTransfers({
            deposits: DEPOSITS,
            drive: 'timers',
            pollIntervalMs: POLL_INTERVAL_MS,
            timing,
            budgetMs: BUDGET_MS,
            signal,
            ...(scenario.faults === undefined ? {} : { faults: scenario.faults }),
          }),
        );
      }
      groups.push(group);
    }
  }
  const summary: Table = {
    title: `Recovery from injected faults (${DEPOSITS} transfers, three cranks on 1 s poll timers, threshold 2; ${RUNS} runs each)`,
    columns: [
      { key: 'scenario', header: 'scenario' },
      { key: 'faults', header: 'faults' },
      { key: 'timing', header: 'timing' },
      { key: 'completed', header: 'done ×runs' },
      { key: 'cleanedUp', header: 'all cleaned up (s)' },
      { key: 'settled', header: 'all votes cast (s)' },
      { key: 'p95', header: 'p95 (s)', digits: 2 },
      { key: 'lost', header: 'lost responses' },
      { key: 'dropped', header: 'dropped tx' },
      { key: 'httpErrors', header: 'HTTP errors seen' },
      { key: 'failedCycles', header: 'failed/all cycles' },
      { key: 'retries', header: 'action retries' },
      { key: 'rebroadcasts', header: 'rebroadcasts' },
      { key: 'resigns', header: 're-signs' },
      { key: 'duplicateVotes', header: 'duplicate votes' },
      { key: 'check', header: 'check' },
    ],
    rows: groups.map(row),
    notes: [
      `Each row ran ${RUNS} times on a fresh devnet. Times: median (min–max) over the runs; p95: median of the runs' p95. Every count is the total over the ${RUNS} runs.`,
      "HTTP 500s: the devnet answers that fraction of every JSON-RPC call on both chains (reads, sends, status polls; the users' calls too) with HTTP 500, from a seeded PRNG. Lost responses: the transaction lands, the answer is an HTTP 500. Dropped: the answer is the signature, the transaction never lands. Both are drawn per send the cranks make (first sends and rebroadcasts); a user's send that reaches the node first may take one, so HTTP errors seen can be below lost responses.",
      'lost responses / dropped tx: faults consumed during the run. HTTP errors seen: non-2xx answers the cranks received (injected 500s plus lost responses). failed cycles: cycles whose read failed (the next cycle is the retry) or whose action gave up after 3 attempts. action retries: attempts after a failed attempt. rebroadcasts: re-sends of the same signed bytes while the status is unknown. re-signs: new blockhash after the old one expired unlanded.',
      "One dead endpoint of two: each chain's primary endpoint is a closed loopback port and the devnet node its fallback (BRIDGE_*_RPC_FALLBACK_URLS); reads and sends fail over to it.",
      'production timing: status poll 450 ms, rebroadcast every 2 s, retry backoff 1 s (the defaults). fast: 10 ms, 100 ms, 50 ms. A dropped transaction waits for its rebroadcast, so drops cost about 2 s each with the defaults.',
      "all cleaned up / all votes cast: from the cranks' start; p95: per-transfer time from the start to its cleanup. duplicate votes and check: counted from the chain, see the next table; any duplicate, or fees not matching the landed transactions, is a FAIL.",
    ],
  };
  return {
    name: 'fault-recovery',
    tables: [summary, authorityTable('Transactions per authority under faults, from the chain', groups)],
    parameters: { deposits: DEPOSITS, runs: RUNS, pollIntervalMs: POLL_INTERVAL_MS, budgetMs: BUDGET_MS, timings: TIMINGS, scenarios: SCENARIOS },
    failures: groups.flatMap(({ label, results }) => results.flatMap((result) => result.problems.map((problem) => `${label}: ${problem}`))),
    data: runsData(groups),
  };
}

export const faultRecoveryBench: Bench = {
  name: 'fault-recovery',
  description: 'time to complete, retries and a no-double-vote check under HTTP 500s, lost responses and dropped transactions',
  run,
};
