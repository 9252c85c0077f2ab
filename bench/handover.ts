import { chainBounds } from '../src/chain/client/chain-bounds.js';
import { Registry } from 'prom-client';
import { assembleBridgeChains } from '../src/assemble-crank.js';
import { createLogger } from '../src/log/logger.js';
import { startCrank, type CrankService } from '../src/machines/crank-service.js';
import { createMetrics, type Metrics } from '../src/metrics/metrics.js';
import { sleep } from '../src/time.js';
import type { Bench, BenchResult, Table } from './report.js';
import { benchCrankParts, startBenchWorld, type BenchWorld } from './support/bench-world.js';
import { deposit, fundUsers } from './support/users.js';

/**
 * Issue 41: how long a key goes unsigned when its instance is replaced, at the production default
 * poll (15 s), before and after the signing lease. Before (main's behaviour): every start waits
 * the quiet window, 55 s. After: a graceful stop releases the lease and the next instance takes it
 * at its next look. Two events: a rolling deploy (B started beside active A, A stopped gracefully
 * 5 s later) and a restart of the only instance (stopped, then started again). Authority 0's
 * instances are in-process cranks (assembleBridgeChains + startCrank, as src/index.ts runs them);
 * "before" runs the same crank over a chain client without the lease.
 */

const POLL_INTERVAL_MS = 15_000;
const HANDOFF_MS = 300_000;
const SHUTDOWN_DEADLINE_MS = 8_000;
const BUDGET_MS = 150_000;
const SAMPLE_MS = 100;

type Variant = 'before' | 'after';
type Event = 'rolling deploy' | 'restart';

interface Outcome {
  event: Event;
  variant: Variant;
  /** From the stop until the next instance is active (may sign). */
  activeMs: number;
  /** From the stop until its first vote landed (a deposit made at the stop; its finality included). */
  votedMs: number;
}

interface Instance {
  crank: CrankService;
  metrics: Metrics;
}

function startInstance(bench: BenchWorld, variant: Variant, handoffMs: number): Instance {
  const metrics = createMetrics(new Registry());
  const logger = createLogger({ level: 'silent' });
  const parts = { ...benchCrankParts(bench, 0, { pollIntervalMs: POLL_INTERVAL_MS, handoffMs }), logger, metrics };
  const chains = assembleBridgeChains(parts);
  const crank = startCrank({
    settings: parts.config,
    chains: variant === 'after' ? chains : { ...chains, lease: undefined },
    chainBounds: chainBounds(parts.config),
    logger,
    metrics,
  });
  return { crank, metrics };
}

async function landed(metrics: Metrics): Promise<number> {
  return (await metrics.crankTransactionsLanded.get()).values.reduce((sum, value) => sum + value.value, 0);
}

/** Milliseconds from `sinceMs` (performance.now()) until `done`, or NaN past the budget. */
async function until(sinceMs: number, done: () => Promise<boolean> | boolean, signal: AbortSignal): Promise<number> {
  while (performance.now() - sinceMs < BUDGET_MS) {
    if (await done()) return performance.now() - sinceMs;
    await sleep(SAMPLE_MS, signal);
  }
  return Number.NaN;
}

async function runEvent(event: Event, variant: Variant, signal: AbortSignal): Promise<Outcome> {
  process.stderr.write(`[handover ${new Date().toISOString().slice(11, 19)}] ${event}, ${variant}\n`);
  const bench = await startBenchWorld({ capacity: 16, signal });
  const instances: Instance[] = [];
  try {
    const [user] = fundUsers(bench, 1);
    // The instance replaced is active from the start: before, as one that has long been active (no handoff); after, holding the free lease.
    const old = startInstance(bench, variant, variant === 'before' ? 0 : HANDOFF_MS);
    instances.push(old);
    await until(performance.now(), () => old.crank.role()?.role === 'active', signal);
    let next: Instance | undefined;
    if (event === 'rolling deploy') {
      next = startInstance(bench, variant, HANDOFF_MS);
      instances.push(next);
      await sleep(5_000, signal);
    }
    const stoppedAt = performance.now();
    await old.crank.stop(SHUTDOWN_DEADLINE_MS);
    if (next === undefined) {
      next = startInstance(bench, variant, HANDOFF_MS);
      instances.push(next);
    }
    await deposit(bench, user!, { amount: 100n, sourceMint: bench.world.tokenPairs.normal.sourceMint }, signal);
    const successor = next;
    const activeMs = await until(stoppedAt, () => successor.crank.role()?.role === 'active', signal);
    const votedMs = await until(stoppedAt, async () => (await landed(successor.metrics)) > 0, signal);
    return { event, variant, activeMs, votedMs };
  } finally {
    await Promise.all(instances.map((instance) => instance.crank.stop(SHUTDOWN_DEADLINE_MS)));
    await bench.close();
  }
}

const seconds = (ms: number) => (Number.isNaN(ms) ? 'not within the budget' : (ms / 1000).toFixed(1));

async function run(signal: AbortSignal): Promise<BenchResult> {
  const outcomes: Outcome[] = [];
  for (const event of ['rolling deploy', 'restart'] as const) {
    for (const variant of ['before', 'after'] as const) outcomes.push(await runEvent(event, variant, signal));
  }
  const table: Table = {
    title: `Unsigned time per handover at the default ${POLL_INTERVAL_MS / 1000} s poll (quiet window 55 s), before and after the signing lease`,
    columns: [
      { key: 'event', header: 'event' },
      { key: 'variant', header: 'lease' },
      { key: 'active', header: 'stop to may sign (s)' },
      { key: 'voted', header: 'stop to first vote landed (s)' },
    ],
    rows: outcomes.map((outcome) => ({
      event: outcome.event,
      variant: outcome.variant === 'before' ? 'before (quiet window)' : 'after (lease)',
      active: seconds(outcome.activeMs),
      voted: seconds(outcome.votedMs),
    })),
    notes: [
      'The clock starts when the old instance is told to stop (SIGTERM). "May sign": the next instance turns active. "First vote": its first landed transaction, for a deposit made right after the stop, so the deposit\'s finality on the source is included.',
    ],
  };
  const failures = outcomes
    .filter((outcome) => Number.isNaN(outcome.votedMs))
    .map((outcome) => `${outcome.event} ${outcome.variant}: no vote within ${BUDGET_MS / 1000} s`);
  return {
    name: 'handover',
    tables: [table],
    parameters: { pollIntervalMs: POLL_INTERVAL_MS, handoffMs: HANDOFF_MS, shutdownDeadlineMs: SHUTDOWN_DEADLINE_MS },
    failures,
    data: outcomes,
  };
}

export const handoverBench: Bench = {
  name: 'handover',
  description: 'unsigned time per rolling deploy and per restart at the default 15 s poll, before (quiet window) and after the signing lease',
  run,
};
