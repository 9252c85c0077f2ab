import { Registry } from 'prom-client';
import { vi } from 'vitest';
import type { BridgeView } from '../../../src/chain/bridge-chains.js';
import type { ForeignSignerPolicy } from '../../../src/machines/crank-settings.js';
import { startCrank } from '../../../src/machines/start-crank.js';
import { createMetrics, type Metrics } from '../../../src/metrics/metrics.js';
import { captureLogs, type CapturedLogs } from '../../support/log-capture.js';
import { ScriptedChains } from './scripted-chains.js';

/** The crank as the process runs it (startCrank), over a ScriptedChains, with captured logs and metrics. */

const START = new Date('2026-11-22T12:00:00Z');
export const START_SECONDS = START.getTime() / 1000;

/** The health settings of a crank whose test is not about them: no fee warning, keep submitting. */
export const QUIET_HEALTH_SETTINGS = { rpcTimeoutMs: 10_000, onForeignSigner: 'continue', minBalanceLamports: 0 } as const;

export interface TestCrankOptions {
  pollIntervalMs?: number;
  maxAttempts?: number;
  retryBackoffMs?: number;
  onForeignSigner?: ForeignSignerPolicy;
  minBalanceLamports?: number;
  dryRun?: boolean;
  /** BRIDGE_HANDOFF_SECS in ms; absent: 0, no handoff. */
  handoffMs?: number;
  /** Script the chains before the crank starts (its startup cycle reads at once). */
  before?: (chains: ScriptedChains) => void;
}

export function startTestCrank(view: BridgeView, options: TestCrankOptions = {}) {
  const chains = new ScriptedChains(view);
  options.before?.(chains);
  const logs: CapturedLogs = captureLogs('debug');
  const metrics: Metrics = createMetrics(new Registry());
  const crank = startCrank({
    chains,
    pollIntervalMs: options.pollIntervalMs ?? 15_000,
    maxAttempts: options.maxAttempts ?? 3,
    retryBackoffMs: options.retryBackoffMs ?? 1000,
    ...QUIET_HEALTH_SETTINGS,
    ...(options.onForeignSigner === undefined ? {} : { onForeignSigner: options.onForeignSigner }),
    ...(options.minBalanceLamports === undefined ? {} : { minBalanceLamports: options.minBalanceLamports }),
    logger: logs.logger,
    metrics,
    dryRun: options.dryRun,
    ...(options.handoffMs === undefined ? {} : { handoffMs: options.handoffMs }),
  });
  return { chains, logs, metrics, crank };
}

/** Fake timers from START; Date moves with them. */
export function useCrankClock(): void {
  vi.useFakeTimers({ now: START });
}

/** Runs what is due now, promises included, without moving the clock. */
export function settle(): Promise<void> {
  return vi.advanceTimersByTimeAsync(0).then(() => undefined);
}

/** The log records the crank wrote for action attempts. */
export function attemptLines(logs: CapturedLogs): Array<Record<string, unknown>> {
  return logs.records().filter((record) => typeof record['outcome'] === 'string' && typeof record['action'] === 'string');
}
