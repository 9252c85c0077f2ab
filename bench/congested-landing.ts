import type { Keypair } from '@solana/web3.js';
import type { CrankConfig } from '../src/config/config.js';
import { sleep } from '../src/time.js';
import { initNoncePools } from '../test/support/authority.js';
import type { Bench, BenchResult, Table } from './report.js';
import { startBenchWorld, type BenchWorld } from './support/bench-world.js';
import { startBenchCranks, stopBenchCranks, type BenchCrank } from './support/cranks.js';
import { readTrackers } from './support/ledger.js';
import { deposit, fundUsers } from './support/users.js';

/**
 * Issue 42's congested cluster: 400 ms slots, a surge the fee history hides (both chains land
 * only bids of at least FLOOR while getRecentPrioritizationFees shows per-slot minimums, 0), and
 * each chain's plain RPC endpoint, the cranks' read endpoint, forwarding only FORWARD_SHARE of
 * the transactions it accepts to the leader (devnet fault `forwardShare`). Three cranks in nonce
 * mode on production timing carry transfers through every phase, with only the plain path, then
 * with a second port of each chain ("staked", forwarding all) as a send-only path: first the
 * ramp (transfers made before the surge, while the bids climb), then STEADY_WAVES waves once the
 * bids are at the going price. Measures the time from the cranks' start (the surge already on)
 * to a bid at or above the going price (bridge_priority_fee_microlamports sampled every
 * SAMPLE_MS), and for the steady waves the slots from first send to landed (p50/p90/p99, from
 * bridge_landing_slots's buckets, so each is "at most" a bucket bound), the first-version landing
 * rate and the versions per landed transaction.
 */

const SLOT_MS = 400;
const FLOOR = 20_000;
const CAP = 100_000;
const FORWARD_SHARE = 0.1;
const TRANSFERS_PER_WAVE = 3;
const STEADY_WAVES = 4;
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
  bidAtGoingPriceMs: number;
  rampSettledMs: number;
  steadySettledMs: number;
  rampRate: number;
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
  const bench = await startBenchWorld({ capacity: 64, slotIntervalMs: SLOT_MS, signal });
  try {
    for (let slot = 0; slot < bench.authorities.length; slot++) {
      await initNoncePools(bench.world, slot, bench.authorities[slot]!, signal, { nonceAccounts: 2 });
    }
    const users = fundUsers(bench, TRANSFERS_PER_WAVE);
    await depositWave(bench, users, signal);
    const sendExtensions = scenario.sendOnly ? await stakedPaths(bench) : undefined;
    for (const node of [bench.pair.source, bench.pair.target])
      node.faults.set({ seed: 42, forwardShare: FORWARD_SHARE, priceFloor: FLOOR, feeHistory: 'minimum' });
    progress(scenario, 'the surge is on and the plain path drops 90 %; the cranks start');
    const started = performance.now();
    const cranks = startBenchCranks(bench, {
      timing: 'production',
      pollIntervalMs: POLL_INTERVAL_MS,
      priorityFee: { minMicroLamports: 0, maxMicroLamports: CAP },
      nonceAccounts: 2,
      ...(sendExtensions === undefined ? {} : { sendExtensions }),
    });
    try {
      let bidAtGoingPriceMs = Number.NaN;
      const rampSettledMs = await settled(bench, started, signal, async () => {
        if (Number.isNaN(bidAtGoingPriceMs) && (await highestBid(cranks)) >= FLOOR) bidAtGoingPriceMs = performance.now() - started;
      });
      progress(scenario, `ramp settled after ${(rampSettledMs / 1000).toFixed(1)} s; ${STEADY_WAVES} more waves at the going price`);
      const ramp = await landingOf(cranks);
      const steadyStarted = performance.now();
      for (let wave = 0; wave < STEADY_WAVES && !Number.isNaN(rampSettledMs); wave++) {
        // Users' deposits bid nothing and go through the plain path: the source's congestion lifts
        // while they land; the destination's stays on.
        bench.pair.source.faults.set({ priceFloor: 0, forwardShare: 1 });
        await depositWave(bench, users, signal);
        bench.pair.source.faults.set({ priceFloor: FLOOR, forwardShare: FORWARD_SHARE });
        await settled(bench, performance.now(), signal);
      }
      const steady = minus(await landingOf(cranks), ramp, 'target');
      return {
        scenario: scenario.label,
        bidAtGoingPriceMs,
        rampSettledMs,
        steadySettledMs: performance.now() - steadyStarted,
        rampRate: rateOf(ramp.all),
        ...describe(steady),
        maxPrice: maxPrice(bench),
      };
    } finally {
      await stopBenchCranks(cranks);
    }
  } finally {
    await bench.close();
  }
}

async function depositWave(bench: BenchWorld, users: readonly Keypair[], signal: AbortSignal): Promise<void> {
  for (const user of users) await deposit(bench, user, { amount: 100n, sourceMint: bench.world.tokenPairs.frozen.sourceMint }, signal);
}

/** Waits until every transfer is settled (calling `sample` every SAMPLE_MS); the time it took, NaN past the budget. */
async function settled(bench: BenchWorld, since: number, signal: AbortSignal, sample: () => Promise<void> = async () => undefined): Promise<number> {
  while (performance.now() - since < BUDGET_MS) {
    await sample();
    const { header } = readTrackers(bench).deposits;
    if (header.settledPrefix === header.entryCount) return performance.now() - since;
    await sleep(SAMPLE_MS, signal);
  }
  return Number.NaN;
}

/** A second port of each chain, forwarding everything: the send-only path of both chains. */
async function stakedPaths(bench: BenchWorld): Promise<CrankConfig['sendExtensions']> {
  const source = await bench.pair.source.addEndpoint();
  const target = await bench.pair.target.addEndpoint();
  return { source: { sendUrls: [source.url], tip: undefined }, target: { sendUrls: [target.url], tip: undefined } };
}

async function highestBid(cranks: readonly BenchCrank[]): Promise<number> {
  let highest = 0;
  for (const crank of cranks) for (const { value } of (await crank.metrics.priorityFee.get()).values) highest = Math.max(highest, value);
  return highest;
}

interface Landing {
  /** Cumulative bucket counts of bridge_landing_slots, by bound. */
  buckets: Map<number, number>;
  outcomes: Record<'first_version' | 'later_version' | 'not_landed', number>;
  versions: number;
  landed: number;
}

/** What every crank measured, per chain and in all. */
async function landingOf(cranks: readonly BenchCrank[]): Promise<Record<'source' | 'target' | 'all', Landing>> {
  const empty = (): Landing => ({ buckets: new Map(), outcomes: { first_version: 0, later_version: 0, not_landed: 0 }, versions: 0, landed: 0 });
  const result = { source: empty(), target: empty(), all: empty() };
  for (const crank of cranks) {
    for (const value of (await crank.metrics.landingSlots.get()).values) {
      const { le, chain } = value.labels as { le?: string | number; chain: 'source' | 'target' };
      if (value.metricName !== 'bridge_landing_slots_bucket' || le === undefined) continue;
      const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
      for (const one of [result[chain], result.all]) one.buckets.set(bound, (one.buckets.get(bound) ?? 0) + value.value);
    }
    for (const value of (await crank.metrics.landingOutcomes.get()).values) {
      const { chain, outcome } = value.labels as { chain: 'source' | 'target'; outcome: keyof Landing['outcomes'] };
      for (const one of [result[chain], result.all]) one.outcomes[outcome] += value.value;
    }
    for (const value of (await crank.metrics.landingVersions.get()).values) {
      const { chain } = value.labels as { chain: 'source' | 'target' };
      for (const one of [result[chain], result.all]) {
        if (value.metricName === 'bridge_landing_versions_sum') one.versions += value.value;
        if (value.metricName === 'bridge_landing_versions_count') one.landed += value.value;
      }
    }
  }
  return result;
}

/** `after` less `before` on one chain. */
function minus(
  after: Record<'source' | 'target' | 'all', Landing>,
  before: Record<'source' | 'target' | 'all', Landing>,
  chain: 'source' | 'target',
): Landing {
  const a = after[chain];
  const b = before[chain];
  return {
    buckets: new Map([...a.buckets].map(([bound, count]) => [bound, count - (b.buckets.get(bound) ?? 0)])),
    outcomes: {
      first_version: a.outcomes.first_version - b.outcomes.first_version,
      later_version: a.outcomes.later_version - b.outcomes.later_version,
      not_landed: a.outcomes.not_landed - b.outcomes.not_landed,
    },
    versions: a.versions - b.versions,
    landed: a.landed - b.landed,
  };
}

function rateOf(landing: Landing): number {
  const { first_version, later_version, not_landed } = landing.outcomes;
  const total = first_version + later_version + not_landed;
  return total === 0 ? 0 : first_version / total;
}

function describe(landing: Landing) {
  const { first_version, later_version, not_landed } = landing.outcomes;
  return {
    transactions: first_version + later_version + not_landed,
    slotsP50: bucketPercentile(landing.buckets, 0.5),
    slotsP90: bucketPercentile(landing.buckets, 0.9),
    slotsP99: bucketPercentile(landing.buckets, 0.99),
    firstVersionRate: rateOf(landing),
    versionsPerLanded: landing.landed === 0 ? 0 : landing.versions / landing.landed,
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
    for (const landed of node.bank.landedTransactions())
      if (payers.has(landed.feePayer)) highest = Math.max(highest, Number(landed.computeUnitPrice));
  }
  return highest;
}

async function run(signal: AbortSignal): Promise<BenchResult> {
  const outcomes: Outcome[] = [];
  for (const scenario of SCENARIOS) outcomes.push(await runScenario(scenario, signal));
  const seconds = (ms: number) => (Number.isNaN(ms) ? 'not within the budget' : (ms / 1000).toFixed(1));
  const table: Table = {
    title: `Congested landing: three cranks in nonce mode on 1 s timers, production timing, ${SLOT_MS} ms slots, a hidden surge of ${FLOOR} (cap ${CAP}), the plain RPC forwarding ${FORWARD_SHARE * 100} %; ${TRANSFERS_PER_WAVE} transfers during the ramp, then ${STEADY_WAVES} waves of ${TRANSFERS_PER_WAVE} at the going price`,
    columns: [
      { key: 'scenario', header: 'paths' },
      { key: 'bid', header: 'start to a bid >= going price (s)' },
      { key: 'ramp', header: 'ramp settled (s)' },
      { key: 'rampRate', header: 'ramp first-version rate', digits: 2 },
      { key: 'steady', header: 'steady waves (s)' },
      { key: 'transactions', header: 'steady tx (destination)' },
      { key: 'slotsP50', header: 'slots to land p50' },
      { key: 'slotsP90', header: 'p90' },
      { key: 'slotsP99', header: 'p99' },
      { key: 'firstVersionRate', header: 'first-version rate', digits: 2 },
      { key: 'versionsPerLanded', header: 'versions per landed', digits: 2 },
      { key: 'maxPrice', header: 'highest price' },
    ],
    rows: outcomes.map((outcome) => ({
      ...outcome,
      bid: seconds(outcome.bidAtGoingPriceMs),
      ramp: seconds(outcome.rampSettledMs),
      steady: seconds(outcome.steadySettledMs),
    })),
    notes: [
      "The surge and the dropping plain path start before the cranks do; the clock runs from the cranks' start. The ramp: the transfers made before the surge, while each crank's bid climbs from the history's 0. The steady waves: transfers made once the bids are at the going price (the source's congestion lifts while the users' deposits land; the destination's stays on); their columns are the destination chain's ack_deposit transactions.",
      'Slots to land: from the head (a processed slot, read beside the send) at a transaction\'s first send to the slot its landed version is in, from bridge_landing_slots\'s buckets (1, 2, 3, 4, 6, 8, ...): "<= b" is the bucket that holds the percentile. First-version rate: transactions that landed as first signed over every transaction whose outcome became known (what alert BridgeLandingRateLow reads). Goals (issue 42): p50 <= 2 slots, p90 <= 4 slots, >= 0.99 on the first version once the bid is at the going price, a bid at the going price within 3 s.',
    ],
  };
  const failures = outcomes
    .filter((outcome) => Number.isNaN(outcome.rampSettledMs))
    .map((outcome) => `${outcome.scenario}: not settled within ${BUDGET_MS / 1000} s`);
  return {
    name: 'congested-landing',
    tables: [table],
    parameters: {
      slotMs: SLOT_MS,
      floor: FLOOR,
      cap: CAP,
      forwardShare: FORWARD_SHARE,
      transfersPerWave: TRANSFERS_PER_WAVE,
      steadyWaves: STEADY_WAVES,
      pollIntervalMs: POLL_INTERVAL_MS,
    },
    failures,
    data: outcomes,
  };
}

export const congestedLandingBench: Bench = {
  name: 'congested-landing',
  description:
    'slots from send to landed and the first-version landing rate under a hidden surge with a 90 %-dropping plain path, without and with a send-only path (nonce mode), and the time to a bid at the going price',
  run,
};
