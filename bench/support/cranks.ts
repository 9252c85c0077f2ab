import { Registry } from 'prom-client';
import { assembleCrank } from '../../src/assemble-crank.js';
import type { PriorityFeeBounds } from '../../src/chain/client/budget/priority-fee.js';
import type { SubmitTiming } from '../../src/chain/client/submit/transaction-sender.js';
import { createLogger } from '../../src/log/logger.js';
import type { CrankService } from '../../src/machines/crank-service.js';
import { createMetrics, type Metrics } from '../../src/metrics/metrics.js';
import type { ChainSide } from '../../src/domain.js';
import type { CrankConfig } from '../../src/config/config.js';
import { benchCrankParts, type BenchWorld } from './bench-world.js';
import type { PairLamports } from '../../test/support/base-fees.js';
import { authorityLamports, recordSentTransactions, type SentRecord } from './sent-transactions.js';

/**
 * Bridge servers minus HTTP: per authority, the crank src/index.ts runs (assembleCrank on the
 * default configuration with the bench's timing), each with its own metrics registry.
 *
 * Two timing profiles. `production`: the chain client's defaults (status poll 450 ms,
 * rebroadcast and expiry check every 2 s) and the server's defaults (3 attempts, 1 s retry
 * backoff); this is what a deployed server does. `fast`: status poll 10 ms, rebroadcast 100 ms,
 * backoff 50 ms, the tests' setting; it shows how much of a faulty run is waiting on timers.
 */

export type TimingProfile = 'production' | 'fast';

interface Timing {
  submitTiming?: SubmitTiming;
  retryBackoffMs: number;
  maxAttempts: number;
}

const TIMINGS: Record<TimingProfile, Timing> = {
  production: { retryBackoffMs: 1_000, maxAttempts: 3 },
  fast: { submitTiming: { pollIntervalMs: 10, rebroadcastIntervalMs: 100, confirmTimeoutMs: 10_000 }, retryBackoffMs: 50, maxAttempts: 3 },
};
const STOP_DEADLINE_MS = 5_000;

export interface BenchCrank {
  slot: number;
  service: CrankService;
  metrics: Metrics;
  sent: SentRecord;
  /** This authority's lamports on both chains when its crank started. */
  startLamports: PairLamports;
  /** Lines the crank logged at error level (an action that gave up, a failed read). */
  errorLines: string[];
}

export interface CrankOptions {
  timing: TimingProfile;
  pollIntervalMs: number;
  /** Fault injection: called before each sendTransaction a crank makes. */
  beforeSend?: (chain: ChainSide) => void;
  /** A dead URL to configure as each chain's primary endpoint, the devnet node as its fallback. */
  deadPrimaryUrl?: string;
  /** BRIDGE_PRIORITY_FEE_MIN/MAX_MICROLAMPORTS; the defaults when absent. */
  priorityFee?: PriorityFeeBounds;
  /** BRIDGE_NONCE_ACCOUNTS; the default when absent. */
  nonceAccounts?: number;
  /** BRIDGE_*_SEND_URLS and the tips; none when absent. */
  sendExtensions?: CrankConfig['sendExtensions'];
}

export function startBenchCranks(bench: BenchWorld, options: CrankOptions): BenchCrank[] {
  return bench.authorities.map((_, slot) => startBenchCrank(bench, slot, options));
}

function startBenchCrank(bench: BenchWorld, slot: number, options: CrankOptions): BenchCrank {
  const timing = TIMINGS[options.timing];
  const metrics = createMetrics(new Registry());
  const errorLines: string[] = [];
  const logger = createLogger({ level: 'error', destination: { write: (line: string) => void errorLines.push(line) } });
  const sent = recordSentTransactions(bench, options.beforeSend);
  const startLamports = authorityLamports(bench, slot);
  const parts = benchCrankParts(
    bench,
    slot,
    {
      pollIntervalMs: options.pollIntervalMs,
      maxAttempts: timing.maxAttempts,
      retryBackoffMs: timing.retryBackoffMs,
      ...(options.nonceAccounts === undefined ? {} : { nonceAccounts: options.nonceAccounts }),
      ...(options.sendExtensions === undefined ? {} : { sendExtensions: options.sendExtensions }),
    },
    { deadPrimaryUrl: options.deadPrimaryUrl, priorityFee: options.priorityFee },
  );
  const tuning = { fetch: sent.fetch, ...(timing.submitTiming === undefined ? {} : { submitTiming: timing.submitTiming }) };
  const service = assembleCrank({ ...parts, logger, metrics, tuning });
  return { slot, service, metrics, sent, startLamports, errorLines };
}

export async function stopBenchCranks(cranks: readonly BenchCrank[]): Promise<void> {
  await Promise.all(cranks.map((crank) => crank.service.stop(STOP_DEADLINE_MS)));
}

export type CounterName = 'crankCycles' | 'crankRetries' | 'transactionRebroadcasts' | 'transactionResigns' | 'rpcErrors';

/** A counter's total over the label sets that match `labels` (all of them by default). */
export async function counterTotal(metrics: Metrics, name: CounterName, labels: Record<string, string> = {}): Promise<number> {
  const { values } = await metrics[name].get();
  const matches = (valueLabels: Record<string, unknown>) => Object.entries(labels).every(([key, value]) => valueLabels[key] === value);
  return values.filter((value) => matches(value.labels)).reduce((sum, value) => sum + value.value, 0);
}
