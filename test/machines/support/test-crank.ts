import { Registry } from 'prom-client';
import { vi } from 'vitest';
import { chainBounds } from '../../../src/chain/client/chain-bounds.js';
import type { BridgeView } from '../../../src/chain/port/bridge-chains.js';
import { startCrank, type CrankRunSettings } from '../../../src/machines/crank-service.js';
import { createMetrics, type Metrics } from '../../../src/metrics/metrics.js';
import { captureLogs, type CapturedLogs } from '../../support/log-capture.js';
import { ScriptedChains } from './scripted-chains.js';

/** The crank as the process runs it (startCrank), over a ScriptedChains, with captured logs and metrics. */

const START = new Date('2026-11-22T12:00:00Z');
export const START_SECONDS = START.getTime() / 1000;

/**
 * The settings of a crank whose test is not about them: the production defaults for attempts,
 * backoff and timeouts, no fee warning, keep submitting, no handoff.
 */
export const TEST_CRANK_SETTINGS: CrankRunSettings = {
  pollIntervalMs: 15_000,
  maxAttempts: 3,
  retryBackoffMs: 1000,
  onForeignSigner: 'continue',
  minBalanceLamports: 0,
  dryRun: false,
  handoffMs: 0,
  inspectUrl: undefined,
  transferWaitAlertMs: 600_000,
};

/** What the chain client says its calls take with the default RPC timeout (10 s). */
export const TEST_CHAIN_BOUNDS = chainBounds({ rpcTimeoutMs: 10_000 });

export interface TestCrankOptions extends Partial<CrankRunSettings> {
  /** Script the chains before the crank starts (its startup cycle reads at once). */
  before?: (chains: ScriptedChains) => void;
}

export function startTestCrank(view: BridgeView, options: TestCrankOptions = {}) {
  const { before, ...settings } = options;
  const chains = new ScriptedChains(view);
  before?.(chains);
  const logs: CapturedLogs = captureLogs('debug');
  const metrics: Metrics = createMetrics(new Registry());
  const crank = startCrank({
    settings: { ...TEST_CRANK_SETTINGS, ...settings },
    chains,
    chainBounds: TEST_CHAIN_BOUNDS,
    logger: logs.logger,
    metrics,
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
