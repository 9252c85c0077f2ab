import { createActor, fromPromise } from 'xstate';
import type { SignerDescription } from '../signer/authority-signer.js';
import type { BridgeChains, ChainBounds } from '../chain/port/bridge-chains.js';
import type { CrankConfig } from '../config/config.js';
import { CHAINS } from '../domain.js';
import { BridgeError, describeError } from '../errors.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { setLongTimeout } from '../time.js';
import { createCrankActivityLog, type CrankActivity, type CrankActivityLog } from './crank-activity.js';
import { crankSettings, type ActionReport, type ConfiguredCrankSettings, type CycleRead, type ReadInput, type Submission } from './crank-context.js';
import { keepLease, readAndPlan, submitAction } from './crank-effects.js';
import { busyError, MAX_WAITING_CRANK_REQUESTS, stoppedError } from './crank-errors.js';
import { crankMachine } from './crank-machine.js';
import { createCrankRequests, type CrankRequests } from './crank-requests.js';
import { recordCrankEvent, recordHealthGauges, recordLifetimeModes, recordStartingRole, zeroCrankSeries } from './crank-telemetry.js';
import { STEP_ACTIONS, type CrankEmitted, type CrankPollOutcome, type CrankReport, type CrankRoleView } from './crank-types.js';
import { attemptDeadlineMs, worstCaseCycleMs } from './delays.js';
import {
  crankHealth,
  foreignSignerHoldMs,
  healthVerdict,
  type CrankHealth,
  type HealthReport,
  type HealthStatus,
  type HealthVerdict,
} from './health.js';
import { createCrankInspection } from './inspection.js';
import { createLatencyTelemetry, type LatencyTelemetry } from './latency-telemetry.js';
import { leaseMayTakeAtMs, type LeaseStepOutcome, type LeaseWant } from './lease.js';
import { releaseLeaseOnStop } from './lease-release.js';
import { watchLease } from './lease-watch.js';
import { mayTakeOverAtMs, quietWindowMs } from './role.js';
import { watchdogOver, type Watchdog, type WatchdogWiring } from './watchdog/watchdog.js';

/**
 * What the HTTP layer and the process wiring see of the crank: a snapshot for /health, one
 * on-demand cycle for POST /crank/once, its current state and recent activity for
 * GET /crank/ui, and a bounded stop for shutdown. The machine's actor
 * implements it; the HTTP layer never touches the actor directly.
 */

export interface CrankService {
  health(): CrankHealth;
  /** /health's `status` (health.ts): `stalled` is the one a restart can fix. */
  status(): HealthStatus;
  /** Both, decided once: GET /health's status code and `crank` object never disagree. */
  report(): HealthReport;
  /** The machine's current state and its recent cycles and actions (bounded), for GET /crank/ui. */
  readonly activity: CrankActivity;
  /** Active or standby, and a standby's earliest signing time; null while the crank is disabled. */
  role(): CrankRoleView | null;
  /**
   * Run one cycle now. While a cycle runs the request is queued and answered with its own
   * cycle's report. Rejects with CRANK__DISABLED when the crank is not configured and
   * CRANK__STOPPED once shutdown began. An aborted `signal` rejects the caller's promise with
   * its reason; the cycle still runs.
   */
  runOnce(signal?: AbortSignal): Promise<CrankReport>;
  /**
   * Nudge the loop (the machine's POLL event): start a cycle now if none is running, without
   * waiting for its report. A POLL during a cycle is coalesced into it. Throws CRANK__DISABLED
   * or CRANK__STOPPED like runOnce.
   */
  poll(): CrankPollOutcome;
  /**
   * Stop taking cycles; let a running one finish for up to `deadlineMs` milliseconds from now,
   * then abort it. Queued runOnce requests are rejected with CRANK__STOPPED.
   */
  stop(deadlineMs: number): Promise<void>;
}

/**
 * Runs the crank machine as the process's one crank actor, its effects provided as actors over
 * BridgeChains (below), and presents it as the CrankService the HTTP layer and the lifecycle
 * use (docs/architecture.md, "Crank").
 */

/**
 * The configuration the crank runs on: the machine's settings, plus what the runtime around it
 * reads (the inspector, the published alert threshold).
 * A CrankConfig fits whole; tests pass one with their own values.
 */
export type CrankRunSettings = ConfiguredCrankSettings & Pick<CrankConfig, 'inspectUrl' | 'transferWaitAlertMs'>;

export interface StartCrankOptions {
  settings: CrankRunSettings;
  chains: BridgeChains;
  /** How long the chains' calls take at most, from the chain client (src/chain/client/chain-bounds.ts). */
  chainBounds: ChainBounds;
  logger: Logger;
  metrics: Metrics;
  /** Which key signs, for /health: a file, or a PKCS#11 token and whether its session is open. */
  signer?: () => SignerDescription;
  /** The watchdog's settings and where its breaches are kept (src/machines/watchdog/); absent, or chains without `watch`: none runs. */
  watchdog?: WatchdogWiring;
}

export function startCrank(options: StartCrankOptions): CrankService {
  const { settings, metrics } = options;
  const bounds = {
    startedAtMs: Date.now(),
    stalledAfterMs: settings.pollIntervalMs + worstCaseCycleMs(settings, options.chainBounds),
    foreignSignerHoldMs: foreignSignerHoldMs(settings.pollIntervalMs),
  };
  const log = options.logger.child({ component: 'crank' });
  const requests = createCrankRequests();
  const inspection = createCrankInspection(log, settings.inspectUrl);
  const activity = createCrankActivityLog(crankMachine.id);
  const latency = createLatencyTelemetry(metrics);
  const watchdog = watchdogOver(options.chains, options.watchdog, {
    logger: options.logger,
    metrics,
    readTimeoutMs: options.chainBounds.cycleReadMs,
  });
  const actor = createActor(
    crankMachine.provide({ actors: crankActors(options.chains, { attemptDeadlineMs: attemptDeadlineMs(options.chainBounds) }, watchdog) }),
    {
      input: crankSettings(settings),
      inspect: (event) => inspection.inspect(event),
    },
  );
  let stopping: Promise<void> | undefined;
  const lease = options.chains.lease;

  actor.on('*', (emitted) => handleEmitted(emitted, { log, metrics, requests, activity, latency }));
  actor.subscribe({
    next: (snapshot) => {
      recordHealthGauges(snapshot.context.health, metrics);
      // Known only once a read saw the nonce accounts (the fees come from a successful read).
      if (snapshot.context.health.fees !== null) recordLifetimeModes(options.chains.lifetimeModes(), metrics);
      activity.recordState(snapshot.value);
    },
    // Without this handler xstate rethrows an actor error as an uncaught exception.
    error: (err) => {
      log.fatal({ err: describeError(err) }, 'the crank stopped on an internal error; /health reports it; restart the server');
      requests.rejectAll(stoppedError({ when: 'internal_error', error: describeError(err) }));
      metrics.crankEnabled.set(0);
    },
  });
  zeroCrankSeries(metrics);
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
  recordStartingRole(actor.getSnapshot().context.health.role.role, quietWindowMs(settings.pollIntervalMs), log);
  const stopWatch =
    lease === undefined
      ? () => undefined
      : watchLease({
          lease,
          logger: log,
          state: () => ({ lease: actor.getSnapshot().context.health.lease, busy: actor.getSnapshot().hasTag('busy') }),
          poll: () => {
            if (acceptsCycles() && !actor.getSnapshot().hasTag('busy')) actor.send({ type: 'POLL' });
          },
        });

  /** /health's input from the actor's snapshot, the chains and the time. */
  function verdict(): HealthVerdict {
    const snapshot = actor.getSnapshot();
    const internalError = snapshot.status === 'error' ? `the crank stopped on an internal error: ${describeError(snapshot.error)}` : null;
    const { health: facts, progress } = snapshot.context;
    const retrying = progress.lastFailure;
    const enabled = snapshot.status === 'active' || internalError !== null;
    return healthVerdict(
      { enabled, internalError, facts, settings, retrying, endpointProblems: options.chains.endpointProblems(), ...bounds },
      Date.now(),
    );
  }

  function healthOf(decided: HealthVerdict): CrankHealth {
    const snapshot = actor.getSnapshot();
    return crankHealth(snapshot.context.health, snapshot.status === 'active', decided, {
      signer: options.signer?.(),
      dryRun: settings.dryRun,
      checksOff: options.chains.checksOff(),
      lifetimeModes: options.chains.lifetimeModes(),
      leaseMayTakeAtMs: leaseMayTakeAtMs(
        snapshot.context.health.lease,
        mayTakeOverAtMs(snapshot.context.health.role, settings, Date.now()),
        quietWindowMs(settings.pollIntervalMs),
        Date.now(),
      ),
      versionsInFlight: options.chains.versionsInFlight(),
      landing: options.chains.landingSummaries(),
      ...(watchdog === undefined ? {} : { watchdog: watchdog.view() }),
    });
  }

  /** The role beside the crank's answers: a standby says from when it may sign. */
  function role(): CrankRoleView {
    const facts = actor.getSnapshot().context.health.role;
    if (facts.role === 'active') return { role: 'active' };
    // Rounded up: a "not before" must not name a second at which the standby still waits.
    return { role: 'standby', may_sign_at: Math.ceil(mayTakeOverAtMs(facts, settings, Date.now()) / 1000) };
  }

  function acceptsCycles(): boolean {
    return stopping === undefined && actor.getSnapshot().status === 'active';
  }

  function runOnce(signal?: AbortSignal): Promise<CrankReport> {
    if (!acceptsCycles()) return Promise.reject(stoppedError({ when: 'stopping' }));
    if (requests.size() >= MAX_WAITING_CRANK_REQUESTS) return Promise.reject(busyError(requests.size()));
    const { requestId, report } = requests.open(signal);
    actor.send({ type: 'CRANK_ONCE', requestId });
    return report;
  }

  function poll(): CrankPollOutcome {
    if (!acceptsCycles()) throw stoppedError({ when: 'stopping' });
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
    const deadlineAtMs = Date.now() + deadlineMs;
    stopWatch();
    watchdog?.stop();
    actor.send({ type: 'STOP' });
    const settled = await settledWithin(deadlineMs);
    if (!settled) {
      log.warn({ deadlineMs }, 'crank: the running cycle did not finish before the shutdown deadline; aborting it');
      actor.stop();
    }
    requests.rejectAll(stoppedError({ when: 'before_cycle' }));
    inspection.stop();
    await releaseLeaseOnStop({
      lease,
      held: actor.getSnapshot().context.health.lease,
      chains: options.chains,
      log,
      settled,
      remainingMs: deadlineAtMs - Date.now(),
    });
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
    health: () => healthOf(verdict()),
    status: () => verdict().status,
    report: () => {
      const decided = verdict();
      return { status: decided.status, crank: healthOf(decided) };
    },
    activity,
    role,
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
    requests.reject(emitted.requests, stoppedError({ when: 'before_cycle' }));
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
  metrics.crankPollInterval.set(settings.pollIntervalMs / 1000);
  metrics.crankStandbyWindow.set((2 * quietWindowMs(settings.pollIntervalMs) + settings.pollIntervalMs) / 1000);
  metrics.transferWaitAlert.set(settings.transferWaitAlertMs / 1000);
}

/**
 * Runs one attempt of an action, cut at `deadlineMs` (delays.ts: one transaction's life) as
 * a retryable failure. The chain client leaves a transaction whose outcome the cut left unknown
 * pending, and the next attempt resolves it before signing anything new.
 */
export async function withAttemptDeadline<T>(
  submission: Submission,
  deadlineMs: number,
  signal: AbortSignal,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const deadline = new AbortController();
  const timer = setLongTimeout(() => deadline.abort(new Error('attempt deadline')), deadlineMs);
  try {
    return await run(AbortSignal.any([signal, deadline.signal]));
  } catch (err) {
    if (!deadline.signal.aborted || signal.aborted) throw err;
    const action = STEP_ACTIONS[submission.step];
    throw new BridgeError('CRANK__ATTEMPT_DEADLINE_EXCEEDED', { action, deadlineMs });
  } finally {
    timer.clear();
  }
}

export function crankActors(chains: BridgeChains, limits: { attemptDeadlineMs: number }, watchdog?: Watchdog) {
  return {
    readAndPlan: fromPromise<CycleRead, ReadInput>(({ input, signal }) => readAndPlan(chains, input, signal, watchdog)),
    keepLease: fromPromise<LeaseStepOutcome, LeaseWant>(({ input, signal }) =>
      chains.lease === undefined ? Promise.reject(new Error('the chain client has no signing lease')) : keepLease(chains.lease, input, signal),
    ),
    submitAction: fromPromise<ActionReport, Submission>(({ input, signal }) =>
      withAttemptDeadline(input, limits.attemptDeadlineMs, signal, (attemptSignal) => submitAction(chains, input, attemptSignal)),
    ),
  };
}
