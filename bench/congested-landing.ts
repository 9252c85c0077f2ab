import { Registry } from 'prom-client';
import { endpointsOptions, setUpNoncePools } from '../src/chain/client/index.js';
import type { CrankConfig } from '../src/config/config.js';
import { createMetrics } from '../src/metrics/metrics.js';
import { sleep } from '../src/time.js';
import type { Bench, BenchResult, Table } from './report.js';
import { benchCrankParts, startBenchWorld, type BenchWorld } from './support/bench-world.js';
import { startBenchCranks, stopBenchCranks, type BenchCrank } from './support/cranks.js';
import { readTrackers } from './support/ledger.js';
import { deposit, fundUsers } from './support/users.js';

/**
 * Issue 42's congested cluster: 400 ms slots, a surge the fee history hides (both chains land
 * only bids of at least FLOOR while getRecentPrioritizationFees shows per-slot minimums, 0), and
 * each chain's plain RPC endpoint, the cranks' read endpoint, forwarding only FORWARD_SHARE of
 * the transactions it accepts to the leader (devnet fault `forwardShare`). Three cranks in nonce
 * mode on production timing carry TRANSFERS transfers through every phase, with only the plain
 * path, then with a second port of each chain ("staked", forwarding all) as a send-only path.
 * Measures the slots from first send to landed (p50/p90/p99, from bridge_landing_slots's
 * buckets, so each is "at most" a bucket bound), the first-version landing rate, versions per
 * landed transaction, and the time from the cranks' start (the surge already on) to a bid at or
 * above the going price (bridge_priority_fee_microlamports sampled every SAMPLE_MS).
 */

const SLOT_MS = 400;
const FLOOR = 20_000;
const CAP = 100_000;
const FORWARD_SHARE = 0.1;
const TRANSFERS = 4;
const POLL_INTERVAL_MS = 1_000;
const BUDGET_MS = 180_000;
const SAMPLE_MS = 50;

interface Scenario {
  label: string;
  sendOnly: boolean;
}

const SCENARIOS: readonly Scenario[] = [
  { label: 'plain path only', sendOnly: false },
  { label: 'plain + staked send-only path', sendOnly: true },
];

interface Outcome {
  scenario: string;
  settledMs: number;
  bidAtGoingPriceMs: number;
  transactions: number;
  slotsP50: string;
  slotsP90: string;
  slotsP99: string;
  firstVersionRate: number;
  versionsPerLanded: number;
  maxPrice: number;
}

function progress(scenario: Scenario, what: string): void {
  process.stderr.write(`[congested-landing ${new Date().toISOString().slice(11, 19)}] ${scenario.label}: ${what}\n`);
}

async function runScenario(scenario: Scenario, signal: AbortSignal): Promise<Outcome> {
  progress(scenario, 'bootstrapping the devnet');
  const bench = await startBenchWorld({ capacity: 16, slotIntervalMs: SLOT_MS, signal });
  try {
    for (let slot = 0; slot < bench.authorities.length; slot++) {
      const { config, signer } = benchCrankParts(bench, slot, { nonceAccounts: 2 });
      await setUpNoncePools(endpointsOptions(config, createMetrics(new Registry())), signer, config.nonceAccounts, signal);
    }
    const users = fundUsers(bench, TRANSFERS);
    for (const user of users) await deposit(bench, user, { amount: 100n, sourceMint: bench.world.tokenPairs.frozen.sourceMint }, signal);
    const landing = scenario.sendOnly ? await stakedPaths(bench) : undefined;
    for (const node of [bench.pair.source, bench.pair.target]) node.faults.set({ seed: 42, forwardShare: FORWARD_SHARE, priceFloor: FLOOR, feeHistory: 'minimum' });
    progress(scenario, 'the surge is on and the plain path drops 90 %; the cranks start');
    const started = performance.now();
    const cranks = startBenchCranks(bench, {
      timing: 'production',
      pollIntervalMs: POLL_INTERVAL_MS,
      priorityFee: { minMicroLamports: 0, maxMicroLamports: CAP },
      nonceAccounts: 2,
      ...(landing === undefined ? {} : { landing }),
    });
    let bidAtGoingPriceMs = Number.NaN;
    let settledMs = Number.NaN;
    try {
      while (performance.now() - started < BUDGET_MS) {
        if (Number.isNaN(bidAtGoingPriceMs) && (await highestBid(cranks)) >= FLOOR) bidAtGoingPriceMs = performance.now() - started;
        const { header } = readTrackers(bench).deposits;
        if (header.settledPrefix === header.entryCount) {
          settledMs = performance.now() - started;
          break;
        }
        await sleep(SAMPLE_MS, signal);
      }
    } finally {
      await stopBenchCranks(cranks);
    }
    progress(scenario, Number.isNaN(settledMs) ? 'not settled within the budget' : `settled after ${(settledMs / 1000).toFixed(1)} s`);
    return { scenario: scenario.label, settledMs, bidAtGoingPriceMs, ...(await landingOf(cranks)), maxPrice: maxPrice(bench) };
  } finally {
    await bench.close();
  }
}

/** A second port of each chain, forwarding everything: the send-only path of both chains. */
async function stakedPaths(bench: BenchWorld): Promise<CrankConfig['landing']> {
  const source = await bench.pair.source.addEndpoint();
  const target = await bench.pair.target.addEndpoint();
  return { source: { sendUrls: [source.url], tip: undefined }, target: { sendUrls: [target.url], tip: undefined } };
}

async function highestBid(cranks: readonly BenchCrank[]): Promise<number> {
  let highest = 0;
  for (const crank of cranks) for (const { value } of (await crank.metrics.priorityFee.get()).values) highest = Math.max(highest, value);
  return highest;
}

/** The landing measured by every crank on both chains. */
async function landingOf(cranks: readonly BenchCrank[]) {
  const buckets = new Map<number, number>();
  const outcomes = { first_version: 0, later_version: 0, not_landed: 0 };
  let versions = 0;
  let landed = 0;
  for (const crank of cranks) {
    for (const value of (await crank.metrics.landingSlots.get()).values) {
      const le = (value.labels as { le?: string | number }).le;
      if (value.metricName !== 'bridge_landing_slots_bucket' || le === undefined) continue;
      const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
      buckets.set(bound, (buckets.get(bound) ?? 0) + value.value);
    }
    for (const value of (await crank.metrics.landingOutcomes.get()).values) outcomes[value.labels.outcome as keyof typeof outcomes] += value.value;
    for (const value of (await crank.metrics.landingVersions.get()).values) {
      if (value.metricName === 'bridge_landing_versions_sum') versions += value.value;
      if (value.metricName === 'bridge_landing_versions_count') landed += value.value;
    }
  }
  const total = outcomes.first_version + outcomes.later_version + outcomes.not_landed;
  return {
    transactions: total,
    slotsP50: bucketPercentile(buckets, 0.5),
    slotsP90: bucketPercentile(buckets, 0.9),
    slotsP99: bucketPercentile(buckets, 0.99),
    firstVersionRate: total === 0 ? 0 : outcomes.first_version / total,
    versionsPerLanded: landed === 0 ? 0 : versions / landed,
  };
}

/** The smallest bucket bound at or above the p-th share of the landed (cumulative buckets): "<= b". */
function bucketPercentile(cumulative: Map<number, number>, p: number): string {
  const bounds = [...cumulative.keys()].sort((a, b) => a - b);
  const count = cumulative.get(Number.POSITIVE_INFINITY) ?? 0;
  if (count === 0) return 'none landed';
  const bound = bounds.find((le) => cumulative.get(le)! >= p * count);
  return bound === Number.POSITIVE_INFINITY ? '> 150' : `<= ${bound}`;
}

/** The highest price an authority's landed transaction paid (nonce set-up pays none). */
function maxPrice(bench: BenchWorld): number {
  const payers = new Set(bench.authorities.map((authority) => authority.publicKey.toBase58()));
  let highest = 0;
  for (const node of [bench.pair.source, bench.pair.target]) {
    for (const landed of node.bank.landedTransactions()) if (payers.has(landed.feePayer)) highest = Math.max(highest, Number(landed.computeUnitPrice));
  }
  return highest;
}

async function run(signal: AbortSignal): Promise<BenchResult> {
  const outcomes: Outcome[] = [];
  for (const scenario of SCENARIOS) outcomes.push(await runScenario(scenario, signal));
  const seconds = (ms: number) => (Number.isNaN(ms) ? 'not within the budget' : (ms / 1000).toFixed(1));
  const table: Table = {
    title: `Congested landing: ${TRANSFERS} transfers, three cranks in nonce mode on 1 s timers, production timing, ${SLOT_MS} ms slots, a hidden surge of ${FLOOR} (cap ${CAP}), the plain RPC forwarding ${FORWARD_SHARE * 100} %`,
    columns: [
      { key: 'scenario', header: 'paths' },
      { key: 'bid', header: 'start to a bid >= going price (s)' },
      { key: 'settled', header: 'start to all settled (s)' },
      { key: 'transactions', header: 'crank tx' },
      { key: 'slotsP50', header: 'slots to land p50' },
      { key: 'slotsP90', header: 'p90' },
      { key: 'slotsP99', header: 'p99' },
      { key: 'firstVersionRate', header: 'first-version rate', digits: 2 },
      { key: 'versionsPerLanded', header: 'versions per landed', digits: 2 },
      { key: 'maxPrice', header: 'highest price' },
    ],
    rows: outcomes.map((outcome) => ({ ...outcome, bid: seconds(outcome.bidAtGoingPriceMs), settled: seconds(outcome.settledMs) })),
    notes: [
      'The surge and the dropping plain path start before the cranks do; the clock runs from the cranks\' start. Slots to land: from the newest slot seen at a transaction\'s first send to the slot its landed version is in, read from bridge_landing_slots\'s buckets (1, 2, 3, 4, 6, 8, ...), so "<= b" is the bucket that holds the percentile.',
      'first-version rate: transactions that landed as first signed, over every transaction whose outcome became known (what alert BridgeLandingRateLow reads). Goals (issue 42): p50 <= 2 slots, p90 <= 4 slots, >= 0.99 on the first version once the bid is at the going price, a bid at the going price within 3 s.',
    ],
  };
  const failures = outcomes.filter((outcome) => Number.isNaN(outcome.settledMs)).map((outcome) => `${outcome.scenario}: not settled within ${BUDGET_MS / 1000} s`);
  return { name: 'congested-landing', tables: [table], parameters: { slotMs: SLOT_MS, floor: FLOOR, cap: CAP, forwardShare: FORWARD_SHARE, transfers: TRANSFERS, pollIntervalMs: POLL_INTERVAL_MS }, failures, data: outcomes };
}

export const congestedLandingBench: Bench = {
  name: 'congested-landing',
  description: 'slots from send to landed and the first-version landing rate under a hidden surge with a 90 %-dropping plain path, without and with a send-only path (nonce mode), and the time to a bid at the going price',
  run,
};
