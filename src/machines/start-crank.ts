import { createActor } from 'xstate';
import type { SignerDescription } from '../chain/authority-signer.js';
import type { BridgeChains } from '../chain/bridge-chains.js';
import { BridgeError, describeError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { setLongTimeout } from '../time.js';
import { CHAINS } from './authority-checks.js';
import { crankActors } from './crank-actors.js';
import { createCrankActivityLog, type CrankActivityLog } from './crank-activity.js';
import { crankSettings, type ForeignSignerPolicy } from './crank-settings.js';
import type { CrankEmitted } from './crank-events.js';
import type { HealthFacts } from './health-facts.js';
import { crankMachine } from './crank-machine.js';
import { createCrankRequests, type CrankRequests } from './crank-requests.js';
import type { CrankHealth, CrankPollOutcome, CrankReport, CrankService } from './crank-service.js';
import { recordCrankEvent, recordHealthGauges } from './crank-telemetry.js';
import { attemptDeadlineMs, worstCaseCycleMs } from './cycle-bound.js';
import { healthVerdict, type HealthVerdict } from './health-status.js';
import { quietWindowMs } from './authority-role.js';
import { createCrankInspection } from './inspection.js';
import { createLatencyTelemetry, type LatencyTelemetry } from './latency-telemetry.js';

/**
 * Runs the crank machine as the process's one crank actor and presents it as the
 * CrankService the HTTP layer and the lifecycle use (docs/architecture.md, "Crank").
 */

export interface StartCrankOptions {
  chains: BridgeChains;
  pollIntervalMs: number;
  maxAttempts: number;
  retryBackoffMs: number;
  /** BRIDGE_RPC_TIMEOUT_MS: part of the worst-case cycle, and so of the `stalled` bound. */
  rpcTimeoutMs: number;
  onForeignSigner: ForeignSignerPolicy;
  /** BRIDGE_HANDOFF_SECS in ms; absent: 0, no handoff. */
  handoffMs?: number;
  minBalanceLamports: number;
  logger: Logger;
  metrics: Metrics;
  /** BRIDGE_XSTATE_INSPECT: WebSocket URL of an inspector the operator runs. */
  inspectUrl?: string;
  /** BRIDGE_DRY_RUN: plan every cycle, submit nothing. */
  dryRun?: boolean;
  /** BRIDGE_TRANSFER_WAIT_ALERT_SECS, published as bridge_transfer_wait_alert_seconds (the server always sets it). */
  transferWaitAlertMs?: number;
  /** Which key signs, for /health: a file, or a PKCS#11 token and whether its session is open. */
  signer?: () => SignerDescription;
}

/**
 * A foreign signature keeps /health degraded this long (BRIDGE_ON_FOREIGN_SIGNER=continue): long
 * enough for a scrape-based alert to see it, short enough that a rollout's seconds of overlap
 * clear on their own.
 */
export const FOREIGN_SIGNER_HOLD_MS = 15 * 60_000;

export function startCrank(options: StartCrankOptions): CrankService {
  const { metrics } = options;
  const startedAtMs = Date.now();
  const stalledAfterMs = options.pollIntervalMs + worstCaseCycleMs(options);
  const foreignSignerHoldMs = Math.max(FOREIGN_SIGNER_HOLD_MS, 2 * options.pollIntervalMs);
  const log = options.logger.child({ component: 'crank' });
  const requests = createCrankRequests();
  const inspection = createCrankInspection(log, options.inspectUrl);
  const activity = createCrankActivityLog(crankMachine.id);
  const latency = createLatencyTelemetry(metrics);
  const actor = createActor(crankMachine.provide({ actors: crankActors(options.chains, { attemptDeadlineMs: attemptDeadlineMs(options) }) }), {
    input: crankSettings({ ...options, dryRun: options.dryRun ?? false, handoffMs: options.handoffMs ?? 0 }),
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
  const dryRun = options.dryRun === true;
  metrics.crankEnabled.set(1);
  for (const chain of CHAINS) metrics.authorityMinBalance.set({ chain }, options.minBalanceLamports);
  metrics.crankDryRun.set(dryRun ? 1 : 0);
  metrics.crankHandoff.set((options.handoffMs ?? 0) / 1000);
  if (options.transferWaitAlertMs !== undefined) metrics.transferWaitAlert.set(options.transferWaitAlertMs / 1000);
  actor.start();
  log.info(
    {
      pollIntervalMs: options.pollIntervalMs,
      maxAttempts: options.maxAttempts,
      retryBackoffMs: options.retryBackoffMs,
      stalledAfterMs,
      onForeignSigner: options.onForeignSigner,
      minBalanceLamports: options.minBalanceLamports,
      dryRun,
      handoffMs: options.handoffMs ?? 0,
      role: actor.getSnapshot().context.health.role.role,
      quietWindowMs: quietWindowMs(options.pollIntervalMs),
    },
    dryRun ? 'crank started in dry run: it plans every cycle and submits nothing' : 'crank started',
  );

  function verdict(): HealthVerdict {
    const snapshot = actor.getSnapshot();
    const internalError = snapshot.status === 'error' ? `the crank stopped on an internal error: ${describeError(snapshot.error)}` : null;
    const { health: facts, settings, progress } = snapshot.context;
    const enabled = snapshot.status === 'active' || internalError !== null;
    const retrying = snapshot.hasTag('degraded') ? retryingAttempt(progress.attempt, settings.maxAttempts, progress.failure?.error) : null;
    return healthVerdict({ enabled, internalError, startedAtMs, facts, settings, stalledAfterMs, foreignSignerHoldMs, retrying }, Date.now());
  }

  function health(): CrankHealth {
    const snapshot = actor.getSnapshot();
    const crankHealth = healthFromFacts(snapshot.context.health, snapshot.status === 'active', verdict().problems);
    const checksOff = options.chains.checksOff();
    const withSigner = options.signer === undefined ? crankHealth : { ...crankHealth, signer: options.signer() };
    return { ...withSigner, ...(dryRun ? { dry_run: true } : {}), ...(checksOff.length > 0 ? { checks_off: checksOff } : {}) };
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

/** /health's `crank` object: unix seconds, JS numbers; last_error says everything that is wrong. */
function healthFromFacts(facts: HealthFacts, active: boolean, problems: string[]): CrankHealth {
  return {
    enabled: active,
    last_run_at: toUnixSeconds(facts.lastRunAtMs),
    last_success_at: toUnixSeconds(facts.lastSuccessAtMs),
    last_error: problems.length > 0 ? problems.join('; ') : null,
    last_action: facts.lastAction,
    total_actions_submitted: facts.transactionsLanded,
    role: facts.role.role,
    role_since: toUnixSeconds(facts.role.sinceMs),
  };
}

function toUnixSeconds(ms: number | null): number | null {
  return ms === null ? null : Math.floor(ms / 1000);
}

function stoppedError(message: string): BridgeError<'CRANK__STOPPED'> {
  return new BridgeError('CRANK__STOPPED', {}, message);
}

/**
 * Requests that may wait for a cycle at once. Every waiting request is answered by the same next
 * cycle, so more waiting adds nothing but memory: beyond this a request is refused (HTTP 503).
 */
export const MAX_WAITING_CRANK_REQUESTS = 64;

function busyError(waiting: number): BridgeError<'CRANK__BUSY'> {
  return new BridgeError(
    'CRANK__BUSY',
    { waiting, limit: MAX_WAITING_CRANK_REQUESTS },
    `${waiting} crank requests already wait for the next cycle (at most ${MAX_WAITING_CRANK_REQUESTS}); try again after it, or read /health`,
  );
}

/** "attempt 1 of 3 failed: <error>", for /health while the action backs off. */
function retryingAttempt(attempt: number, maxAttempts: number, error: string | undefined): string {
  return `attempt ${attempt} of ${maxAttempts} failed: ${error ?? 'unknown error'}`;
}
