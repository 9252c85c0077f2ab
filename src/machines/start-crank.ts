import { createActor } from 'xstate';
import type { SignerDescription } from '../chain/authority-signer.js';
import type { BridgeChains } from '../chain/bridge-chains.js';
import type { CrankConfig } from '../config/config.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { setLongTimeout } from '../time.js';
import { CHAINS } from './rules.js';
import { crankActors } from './crank-actors.js';
import { createCrankActivityLog, type CrankActivityLog } from './crank-activity.js';
import { crankSettings, type ConfiguredCrankSettings } from './crank-settings.js';
import type { CrankEmitted } from './crank-events.js';
import { busyError, MAX_WAITING_CRANK_REQUESTS, stoppedError } from './crank-errors.js';
import { crankHealth, crankVerdict, foreignSignerHoldMs, type HealthBounds } from './crank-health-view.js';
import { crankMachine } from './crank-machine.js';
import { createCrankRequests, type CrankRequests } from './crank-requests.js';
import type { CrankHealth, CrankPollOutcome, CrankReport, CrankService } from './crank-service.js';
import { recordCrankEvent, recordHealthGauges } from './crank-telemetry.js';
import { attemptDeadlineMs, worstCaseCycleMs } from './cycle-bound.js';
import type { HealthVerdict } from './health-status.js';
import { quietWindowMs } from './rules.js';
import { createCrankInspection } from './inspection.js';
import { createLatencyTelemetry, type LatencyTelemetry } from './latency-telemetry.js';

/**
 * Runs the crank machine as the process's one crank actor and presents it as the
 * CrankService the HTTP layer and the lifecycle use (docs/architecture.md, "Crank").
 */

/**
 * The configuration the crank runs on: the machine's settings, plus what the runtime around it
 * reads (the `stalled` bound's RPC timeout, the inspector, the published alert threshold).
 * A CrankConfig fits whole; tests pass one with their own values.
 */
export type CrankRunSettings = ConfiguredCrankSettings & Pick<CrankConfig, 'rpcTimeoutMs' | 'inspectUrl' | 'transferWaitAlertMs'>;

export interface StartCrankOptions {
  settings: CrankRunSettings;
  chains: BridgeChains;
  logger: Logger;
  metrics: Metrics;
  /** Which key signs, for /health: a file, or a PKCS#11 token and whether its session is open. */
  signer?: () => SignerDescription;
}

export function startCrank(options: StartCrankOptions): CrankService {
  const { settings, metrics } = options;
  const bounds: HealthBounds = {
    startedAtMs: Date.now(),
    stalledAfterMs: settings.pollIntervalMs + worstCaseCycleMs(settings),
    foreignSignerHoldMs: foreignSignerHoldMs(settings.pollIntervalMs),
  };
  const log = options.logger.child({ component: 'crank' });
  const requests = createCrankRequests();
  const inspection = createCrankInspection(log, settings.inspectUrl);
  const activity = createCrankActivityLog(crankMachine.id);
  const latency = createLatencyTelemetry(metrics);
  const actor = createActor(crankMachine.provide({ actors: crankActors(options.chains, { attemptDeadlineMs: attemptDeadlineMs(settings) }) }), {
    input: crankSettings(settings),
    inspect: (event) => inspection.inspect(event),
  });
  let stopping: Promise<void> | undefined;

  actor.on('*', (emitted) => handleEmitted(emitted, { log, metrics, requests, activity, latency }));
  actor.subscribe({
    next: (snapshot) => {
      recordHealthGauges(snapshot.context.health, metrics);
      activity.recordState(snapshot.value);
    },
    // Without this handler xstate rethrows an actor error as an uncaught exception.
    error: (err) => {
      log.fatal({ err: describeError(err) }, 'the crank stopped on an internal error; /health reports it; restart the server');
      requests.rejectAll(stoppedError(`the crank stopped on an internal error: ${describeError(err)}`));
      metrics.crankEnabled.set(0);
    },
  });
  publishSettings(settings, metrics);
  actor.start();
  log.info(
    {
      pollIntervalMs: settings.pollIntervalMs,
      maxAttempts: settings.maxAttempts,
      retryBackoffMs: settings.retryBackoffMs,
      stalledAfterMs: bounds.stalledAfterMs,
      onForeignSigner: settings.onForeignSigner,
      minBalanceLamports: settings.minBalanceLamports,
      dryRun: settings.dryRun,
      handoffMs: settings.handoffMs,
      role: actor.getSnapshot().context.health.role.role,
      quietWindowMs: quietWindowMs(settings.pollIntervalMs),
    },
    settings.dryRun ? 'crank started in dry run: it plans every cycle and submits nothing' : 'crank started',
  );

  function verdict(): HealthVerdict {
    return crankVerdict(actor.getSnapshot(), bounds, Date.now());
  }

  function health(): CrankHealth {
    const snapshot = actor.getSnapshot();
    return crankHealth(snapshot.context.health, snapshot.status === 'active', verdict().problems, {
      signer: options.signer?.(),
      dryRun: settings.dryRun,
      checksOff: options.chains.checksOff(),
    });
  }

  function acceptsCycles(): boolean {
    return stopping === undefined && actor.getSnapshot().status === 'active';
  }

  function runOnce(signal?: AbortSignal): Promise<CrankReport> {
    if (!acceptsCycles()) return Promise.reject(stoppedError('the crank is stopping or stopped and runs no more cycles'));
    if (requests.size() >= MAX_WAITING_CRANK_REQUESTS) return Promise.reject(busyError(requests.size()));
    const { requestId, report } = requests.open(signal);
    actor.send({ type: 'CRANK_ONCE', requestId });
    return report;
  }

  function poll(): CrankPollOutcome {
    if (!acceptsCycles()) throw stoppedError('the crank is stopping or stopped and runs no more cycles');
    // A `busy` state is a cycle running: the machine coalesces the POLL into it.
    const outcome = actor.getSnapshot().hasTag('busy') ? 'coalesced' : 'started';
    actor.send({ type: 'POLL' });
    return outcome;
  }

  function stop(deadlineMs: number): Promise<void> {
    stopping ??= stopActor(deadlineMs);
    return stopping;
  }

  async function stopActor(deadlineMs: number): Promise<void> {
    actor.send({ type: 'STOP' });
    if (!(await settledWithin(deadlineMs))) {
      log.warn({ deadlineMs }, 'crank: the running cycle did not finish before the shutdown deadline; aborting it');
      actor.stop();
    }
    requests.rejectAll(stoppedError('the crank stopped before the cycle for this request completed'));
    inspection.stop();
    metrics.crankEnabled.set(0);
    log.info('crank stopped');
  }

  /** Resolves true once the actor has reached its final state (or failed), false at the deadline. */
  function settledWithin(deadlineMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      if (actor.getSnapshot().status !== 'active') return resolve(true);
      const finish = (settled: boolean) => {
        timeout.clear();
        subscription.unsubscribe();
        resolve(settled);
      };
      const timeout = setLongTimeout(() => finish(false), deadlineMs);
      const subscription = actor.subscribe({ complete: () => finish(true), error: () => finish(true) });
    });
  }

  return {
    health,
    status: () => verdict().status,
    activity,
    runOnce,
    poll,
    stop,
  };
}

function handleEmitted(
  emitted: CrankEmitted,
  deps: { log: Logger; metrics: Metrics; requests: CrankRequests; activity: CrankActivityLog; latency: LatencyTelemetry },
): void {
  const { log, metrics, requests, activity, latency } = deps;
  if (emitted.type === 'cycleFinished') requests.answer(emitted.requests, emitted.report);
  if (emitted.type === 'requestsAbandoned') {
    requests.reject(emitted.requests, stoppedError('the crank stopped before the cycle for this request completed'));
  }
  // Telemetry must never take the crank down with it.
  try {
    recordCrankEvent(emitted, log, metrics);
    latency.record(emitted, performance.now());
    activity.record(emitted);
  } catch (err) {
    log.error({ err: describeError(err), emitted: emitted.type }, 'crank: recording logs and metrics failed');
  }
}

/** The settings alerts and dashboards compare against, published once at the start. */
function publishSettings(settings: CrankRunSettings, metrics: Metrics): void {
  metrics.crankEnabled.set(1);
  for (const chain of CHAINS) metrics.authorityMinBalance.set({ chain }, settings.minBalanceLamports);
  metrics.crankDryRun.set(settings.dryRun ? 1 : 0);
  metrics.crankHandoff.set(settings.handoffMs / 1000);
  metrics.transferWaitAlert.set(settings.transferWaitAlertMs / 1000);
}
