import { SystemProgram, VersionedTransaction } from '@solana/web3.js';
import { MAX_COMPUTE_UNIT_LIMIT } from '../src/chain/client/budget/compute-budget.js';
import type { PriorityFeeBounds } from '../src/chain/client/budget/priority-fee.js';
import { DEFAULT_UNITS_PER_INSTRUCTION, priorityFeeLamports } from '../src/chain/fee-rate.js';
import { sleep } from '../src/time.js';
import type { Bench, BenchResult, Table } from './report.js';
import { startBenchWorld, type BenchWorld } from './support/bench-world.js';
import { counterTotal, startBenchCranks, stopBenchCranks } from './support/cranks.js';
import { MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT } from '../devnet/bank/compute-budget.js';
import { readTrackers } from './support/ledger.js';
import { deposit, fundUsers } from './support/users.js';

/**
 * The fee market (issue 20): a backlog of transfers carried through every phase by three cranks
 * (threshold 2, 1 s poll timers, production timing, 400 ms slots: a blockhash lives about 60 s)
 * while both chains land only transactions that bid at least a price floor. Measures the drain
 * time and the lamports per transfer, against today's behaviour before issue 20 (no bid: a cap
 * of 0 sends price 0, which lands exactly as a transaction without budget instructions does),
 * and the lamports the measured limit saved against the default reservation at the same price.
 */

interface Scenario {
  label: string;
  floor: number;
  /** The floor arrives with the fee history frozen at 0 (a surge it has not caught up with). */
  sudden: boolean;
  priorityFee: PriorityFeeBounds;
  budgetMs: number;
}

const TRANSFERS = 30;
const POLL_INTERVAL_MS = 1_000;
const SLOT_MS = 400;
const CAP = 100_000;
const DEFAULT_FEES: PriorityFeeBounds = { minMicroLamports: 0, maxMicroLamports: CAP };
const SAMPLE_MS = 50;

const SCENARIOS: readonly Scenario[] = [
  { label: 'no congestion', floor: 0, sudden: false, priorityFee: DEFAULT_FEES, budgetMs: 120_000 },
  { label: 'steady floor 20,000', floor: 20_000, sudden: false, priorityFee: DEFAULT_FEES, budgetMs: 120_000 },
  { label: 'sudden floor 20,000 (history at 0)', floor: 20_000, sudden: true, priorityFee: DEFAULT_FEES, budgetMs: 300_000 },
  // Two blockhash lives: long enough to see that nothing lands.
  {
    label: 'steady floor 20,000, no bid (before issue 20)',
    floor: 20_000,
    sudden: false,
    priorityFee: { minMicroLamports: 0, maxMicroLamports: 0 },
    budgetMs: 150_000,
  },
];

interface Outcome {
  scenario: string;
  done: number;
  drainMs: number;
  transactions: number;
  baseLamports: number;
  priorityLamports: number;
  /** Priority lamports the same transactions would have paid with the default reservation as their limit. */
  defaultLimitPriorityLamports: number;
  resigns: number;
  maxPrice: number;
}

/** A progress line on stderr: a scenario takes minutes (blockhash lives of 60 s). */
function progress(scenario: Scenario, what: string): void {
  process.stderr.write(`[fee-market ${new Date().toISOString().slice(11, 19)}] ${scenario.label}: ${what}\n`);
}

async function runScenario(scenario: Scenario, signal: AbortSignal): Promise<Outcome> {
  progress(scenario, 'bootstrapping the devnet');
  const bench = await startBenchWorld({ capacity: TRANSFERS + 16, slotIntervalMs: SLOT_MS, signal });
  try {
    const [user] = fundUsers(bench, 1);
    const frozenPair = bench.world.tokenPairs.frozen.sourceMint;
    for (let i = 0; i < TRANSFERS; i++) await deposit(bench, user!, { amount: 100n + BigInt(i), sourceMint: frozenPair }, signal);
    for (const node of [bench.pair.source, bench.pair.target]) {
      if (scenario.sudden) node.faults.set({ freezeFeeHistory: true });
      node.faults.set({ priceFloor: scenario.floor });
      // A whole fee history (150 slots) at the floor: a steady congestion.
      if (!scenario.sudden) node.advanceSlots(150);
    }
    progress(scenario, `${TRANSFERS} deposits made; the cranks start`);
    const started = performance.now();
    const cranks = startBenchCranks(bench, { timing: 'production', pollIntervalMs: POLL_INTERVAL_MS, priorityFee: scenario.priorityFee });
    let drainMs = Number.NaN;
    try {
      while (performance.now() - started < scenario.budgetMs) {
        if (settledCount(bench) === TRANSFERS) {
          drainMs = performance.now() - started;
          break;
        }
        await sleep(SAMPLE_MS, signal);
      }
    } finally {
      progress(scenario, `${settledCount(bench)} of ${TRANSFERS} done; stopping the cranks`);
      await stopBenchCranks(cranks);
    }
    signal.throwIfAborted();
    const resigns = (await Promise.all(cranks.map((crank) => counterTotal(crank.metrics, 'transactionResigns')))).reduce((a, b) => a + b, 0);
    return { scenario: scenario.label, done: settledCount(bench), drainMs, resigns, ...feesOf(bench) };
  } finally {
    await bench.close();
  }
}

function settledCount(bench: BenchWorld): number {
  return Number(readTrackers(bench).deposits.header.settledPrefix);
}

/** What the chains charged the authorities, and what the same transactions would have paid under the default reservation. */
function feesOf(bench: BenchWorld) {
  const payers = new Set(bench.authorities.map((authority) => authority.publicKey.toBase58()));
  const fees = { transactions: 0, baseLamports: 0, priorityLamports: 0, defaultLimitPriorityLamports: 0, maxPrice: 0 };
  for (const node of [bench.pair.source, bench.pair.target]) {
    for (const landed of node.bank.landedTransactions()) {
      if (!payers.has(landed.feePayer)) continue;
      const price = Number(landed.computeUnitPrice);
      const { bridge, builtins } = defaultReservationOf(landed.wire, bench);
      const defaultLimit = Math.min(
        MAX_COMPUTE_UNIT_LIMIT,
        bridge * DEFAULT_UNITS_PER_INSTRUCTION + builtins * MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT,
      );
      fees.transactions += 1;
      fees.baseLamports += Number(landed.fee - landed.priorityFee);
      fees.priorityLamports += Number(landed.priorityFee);
      fees.defaultLimitPriorityLamports += priorityFeeLamports(price, defaultLimit);
      fees.maxPrice = Math.max(fees.maxPrice, price);
    }
  }
  return fees;
}

/**
 * What the same transaction would reserve without a limit: 200,000 CU per bridge instruction
 * and 3,000 per builtin it keeps, the price instruction and (in nonce mode) AdvanceNonceAccount.
 * Counted by program, not by position: a nonce transaction leads with one more instruction.
 */
function defaultReservationOf(wire: Uint8Array, bench: BenchWorld): { bridge: number; builtins: number } {
  const { message } = VersionedTransaction.deserialize(wire);
  const programs = message.compiledInstructions.map((ix) => message.staticAccountKeys[ix.programIdIndex]!);
  const bridge = programs.filter((program) => program.equals(bench.programId)).length;
  const advance = programs.filter((program) => program.equals(SystemProgram.programId)).length;
  return { bridge, builtins: 1 + advance };
}

function row(outcome: Outcome) {
  const perTransfer = (lamports: number) => (outcome.done === 0 ? null : Math.round(lamports / outcome.done));
  return {
    scenario: outcome.scenario,
    done: `${outcome.done}/${TRANSFERS}`,
    drain: Number.isNaN(outcome.drainMs) ? 'not within the budget' : (outcome.drainMs / 1000).toFixed(1),
    transactions: outcome.transactions,
    resigns: outcome.resigns,
    maxPrice: outcome.maxPrice,
    perTransfer: perTransfer(outcome.baseLamports + outcome.priorityLamports),
    priorityPerTransfer: perTransfer(outcome.priorityLamports),
    saved: outcome.defaultLimitPriorityLamports - outcome.priorityLamports,
  };
}

async function run(signal: AbortSignal): Promise<BenchResult> {
  const outcomes: Outcome[] = [];
  for (const scenario of SCENARIOS) outcomes.push(await runScenario(scenario, signal));
  const table: Table = {
    title: `Fee market: ${TRANSFERS} transfers (Rejected: three transactions' worth of votes each), three cranks on 1 s timers, production timing, 400 ms slots, cap ${CAP}`,
    columns: [
      { key: 'scenario', header: 'scenario' },
      { key: 'done', header: 'done' },
      { key: 'drain', header: 'drain (s)' },
      { key: 'transactions', header: 'crank tx landed' },
      { key: 'resigns', header: 're-signs' },
      { key: 'maxPrice', header: 'highest price' },
      { key: 'perTransfer', header: 'lamports/transfer' },
      { key: 'priorityPerTransfer', header: 'of which priority' },
      { key: 'saved', header: 'saved by measured limit' },
    ],
    rows: outcomes.map(row),
    notes: [
      'Floor: both chains land only transactions bidding at least that many micro-lamports per CU; the fee history follows it (steady), or stays at 0 (sudden). Set after the deposits, before the cranks start.',
      'no bid (before issue 20): the cap set to 0, so every transaction bids 0, as one without budget instructions does: it is accepted and never lands.',
      'lamports/transfer: base + priority fees the chains charged the three authorities, over the transfers done. saved by measured limit: what the same landed transactions would have paid in priority with the default reservation (200,000 CU per bridge instruction + 3,000 for the price instruction and for a nonce advance, at most 1,400,000) at the same price, minus what they paid.',
      "drain: from the cranks' start until every transfer is cleaned up. re-signs: transactions whose blockhash expired unlanded.",
    ],
  };
  const failures = outcomes
    .filter((outcome, i) => SCENARIOS[i]!.priorityFee.maxMicroLamports > 0 && outcome.done < TRANSFERS)
    .map((outcome) => `${outcome.scenario}: ${outcome.done} of ${TRANSFERS} transfers done`);
  return {
    name: 'fee-market',
    tables: [table],
    parameters: { transfers: TRANSFERS, pollIntervalMs: POLL_INTERVAL_MS, slotMs: SLOT_MS, cap: CAP, scenarios: SCENARIOS },
    failures,
    data: outcomes,
  };
}

export const feeMarketBench: Bench = {
  name: 'fee-market',
  description:
    'drain time and lamports per transfer under a steady and a sudden priority-fee floor, against no bid; lamports saved by the measured limit',
  run,
};
