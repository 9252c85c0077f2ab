import { sleep } from '../src/time.js';
import { initNoncePools } from '../test/support/authority.js';
import type { Bench, BenchResult, Table } from './report.js';
import { startBenchWorld, type BenchWorld } from './support/bench-world.js';
import { startBenchCranks, stopBenchCranks } from './support/cranks.js';
import { deposit, fundUsers } from './support/users.js';

/**
 * Issue 31's surge the fee history does not show: both chains land only bids of at least
 * FLOOR micro-lamports per CU while getRecentPrioritizationFees reports per-slot minimums (0, as
 * Agave's cache does); one transfer's votes are due. Measures the time from the cranks' start
 * (the surge already on) to the first vote landing on the destination, and the lamports each
 * landed crank transaction paid, in blockhash mode (a bid escalates at its blockhash's expiry)
 * beside nonce mode (it escalates after the chain's measured re-sign pace against the same nonce value).
 */

const SLOT_MS = 400;
const FLOOR = 20_000;
const CAP = 100_000;
const POLL_INTERVAL_MS = 1_000;
const BUDGET_MS = 150_000;
const SAMPLE_MS = 50;

interface Scenario {
  label: string;
  nonceAccounts: number;
}

const SCENARIOS: readonly Scenario[] = [
  { label: 'blockhash mode', nonceAccounts: 0 },
  { label: 'nonce mode', nonceAccounts: 2 },
];

interface Outcome {
  scenario: string;
  landedMs: number;
  transactions: number;
  lamportsPerTransaction: number;
  maxPrice: number;
}

function progress(scenario: Scenario, what: string): void {
  process.stderr.write(`[surge-landing ${new Date().toISOString().slice(11, 19)}] ${scenario.label}: ${what}\n`);
}

async function runScenario(scenario: Scenario, signal: AbortSignal): Promise<Outcome> {
  progress(scenario, 'bootstrapping the devnet');
  const bench = await startBenchWorld({ capacity: 16, slotIntervalMs: SLOT_MS, signal });
  try {
    for (let slot = 0; slot < bench.authorities.length && scenario.nonceAccounts > 0; slot++) {
      await initNoncePools(bench.world, slot, bench.authorities[slot]!, signal, { nonceAccounts: scenario.nonceAccounts });
    }
    const [user] = fundUsers(bench, 1);
    await deposit(bench, user!, { amount: 100n, sourceMint: bench.world.tokenPairs.frozen.sourceMint }, signal);
    for (const node of [bench.pair.source, bench.pair.target]) node.faults.set({ priceFloor: FLOOR, feeHistory: 'minimum' });
    const since = [...bench.pair.target.bank.landedTransactions()].length;
    progress(scenario, 'the surge is on; the cranks start');
    const started = performance.now();
    const cranks = startBenchCranks(bench, {
      timing: 'production',
      pollIntervalMs: POLL_INTERVAL_MS,
      priorityFee: { minMicroLamports: 0, maxMicroLamports: CAP },
      nonceAccounts: scenario.nonceAccounts,
    });
    let landedMs = Number.NaN;
    try {
      while (performance.now() - started < BUDGET_MS) {
        if (crankTransactions(bench, since).length > 0) {
          landedMs = performance.now() - started;
          break;
        }
        await sleep(SAMPLE_MS, signal);
      }
    } finally {
      await stopBenchCranks(cranks);
    }
    progress(scenario, Number.isNaN(landedMs) ? 'nothing landed within the budget' : `first vote landed after ${(landedMs / 1000).toFixed(1)} s`);
    const landed = crankTransactions(bench, since);
    const lamports = landed.reduce((sum, transaction) => sum + Number(transaction.fee), 0);
    const maxPrice = landed.reduce((max, transaction) => Math.max(max, Number(transaction.computeUnitPrice)), 0);
    return {
      scenario: scenario.label,
      landedMs,
      transactions: landed.length,
      lamportsPerTransaction: landed.length === 0 ? 0 : Math.round(lamports / landed.length),
      maxPrice,
    };
  } finally {
    await bench.close();
  }
}

/** The authorities' transactions that landed on the destination (the votes), nonce set-up excluded by `since`. */
function crankTransactions(bench: BenchWorld, since: number) {
  const payers = new Set(bench.authorities.map((authority) => authority.publicKey.toBase58()));
  return [...bench.pair.target.bank.landedTransactions()].slice(since).filter((landed) => payers.has(landed.feePayer));
}

async function run(signal: AbortSignal): Promise<BenchResult> {
  const outcomes: Outcome[] = [];
  for (const scenario of SCENARIOS) outcomes.push(await runScenario(scenario, signal));
  const table: Table = {
    title: `Surge to landing: one transfer's votes, three cranks on 1 s timers, production timing, ${SLOT_MS} ms slots, floor ${FLOOR}, fee history of per-slot minimums, cap ${CAP}`,
    columns: [
      { key: 'scenario', header: 'mode' },
      { key: 'landed', header: 'surge to first vote landed (s)' },
      { key: 'transactions', header: 'crank tx landed' },
      { key: 'lamportsPerTransaction', header: 'lamports/tx' },
      { key: 'maxPrice', header: 'highest price' },
    ],
    rows: outcomes.map((outcome) => ({
      ...outcome,
      landed: Number.isNaN(outcome.landedMs) ? 'not within the budget' : (outcome.landedMs / 1000).toFixed(1),
    })),
    notes: [
      "The surge starts before the cranks do; the clock runs from the cranks' start to the first authority transaction on the destination. lamports/tx: base + priority the destination charged the authorities, per landed transaction.",
    ],
  };
  const failures = outcomes
    .filter((outcome) => Number.isNaN(outcome.landedMs))
    .map((outcome) => `${outcome.scenario}: no vote landed within ${BUDGET_MS / 1000} s`);
  return {
    name: 'surge-landing',
    tables: [table],
    parameters: { slotMs: SLOT_MS, floor: FLOOR, cap: CAP, pollIntervalMs: POLL_INTERVAL_MS, scenarios: SCENARIOS },
    failures,
    data: outcomes,
  };
}

export const surgeLandingBench: Bench = {
  name: 'surge-landing',
  description:
    'time from a surge the fee history does not show to the first vote landing, and lamports per transaction, blockhash mode beside nonce mode',
  run,
};
