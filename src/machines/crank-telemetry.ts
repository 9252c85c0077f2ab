import type { Gauge } from 'prom-client';
import type { LifetimeMode } from '../chain/port/bridge-chains.js';
import { CHAINS, type ChainSide } from '../domain.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ActionReport } from './crank-context.js';
import { ATTEMPT_OUTCOMES, CYCLE_OUTCOMES, STEP_ACTIONS, type CrankEmitted, type CrankStep } from './crank-types.js';
import { chainsBelowMinimum, HEALTH_STATUSES, LIFETIME_MODES, type HealthFacts, type HealthStatus } from './health.js';
import { LEASE_STATUSES, type LeaseStepOutcome } from './lease.js';
import { CRANK_ROLES, HISTORY_DOUBT_WINDOWS, otherSignerActiveMs, twinProblem, type CrankRole } from './role.js';

/**
 * Logs and metrics from what the crank machine emits (one log line per action attempt) and
 * from its snapshot (the timestamp gauges mirror /health), and the words of /health's
 * `last_action`. Nothing here keeps state.
 */

/**
 * Every labelled counter of the crank (and the action duration histogram) at 0 from the start,
 * for each label value known then: a series that appears only at its first event leaves
 * dashboard panels at "No data" and makes `increase()` miss that first event (deploy/grafana,
 * deploy/prometheus).
 */
export function zeroCrankSeries(metrics: Metrics): void {
  for (const outcome of CYCLE_OUTCOMES) metrics.crankCycles.inc({ outcome }, 0);
  for (const action of Object.values(STEP_ACTIONS)) {
    for (const outcome of ATTEMPT_OUTCOMES) metrics.crankSubmissions.inc({ action, outcome }, 0);
    metrics.crankRetries.inc({ action }, 0);
    metrics.crankTransactionsLanded.inc({ action }, 0);
    metrics.crankDryRunPlanned.inc({ action }, 0);
    metrics.crankActionDuration.zero({ action });
  }
  for (const chain of CHAINS) metrics.foreignSignatures.inc({ chain }, 0);
  for (const outcome of ['took', 'not_taken', 'doubt', 'lost', 'failed']) metrics.crankLeaseEvents.inc({ outcome }, 0);
  metrics.crankStandbyWaits.inc({ reason: 'history_incomplete' }, 0);
}

export function recordCrankEvent(emitted: CrankEmitted, log: Logger, metrics: Metrics): void {
  switch (emitted.type) {
    case 'cycleStarted':
      log.debug({ requests: emitted.requests.length }, 'crank cycle started');
      return;
    case 'planned':
      for (const [action, pending] of Object.entries(emitted.pending)) metrics.crankPending.set({ action }, pending);
      log.debug({ pending: emitted.pending }, 'crank planned');
      return;
    case 'foreignSigner':
      for (const { chain, signature, slot, nonceMove } of emitted.transactions) {
        metrics.foreignSignatures.inc({ chain });
        log.error(
          { chain, signature, slot, nonceMove, halted: emitted.halted },
          "crank: a transaction signed with this authority's key was not signed by this server: another process signs with the same key; " +
            'run only one instance per signer (SPEC §8): find and stop the other one' +
            (emitted.halted ? '; this server submits nothing until it is restarted (BRIDGE_ON_FOREIGN_SIGNER=halt)' : ''),
        );
      }
      return;
    case 'feesShort':
      log.warn(
        { chain: emitted.chain, balance: emitted.balance, need: emitted.need },
        "crank: the authority cannot pay this cycle's fees on this chain; its actions there are skipped until it is funded",
      );
      return;
    case 'balanceLow':
      log.warn(
        { chain: emitted.chain, balance: emitted.balance, minimum: emitted.minimum },
        "crank: the authority's fee balance on this chain fell below BRIDGE_MIN_BALANCE_LAMPORTS: fund it before its fees run out (votes still go out meanwhile)",
      );
      return;
    case 'twinStays':
      log.warn(
        { problem: emitted.problem },
        'crank: another instance keeps signing with this key past BRIDGE_HANDOFF_SECS while this one stands by: find and stop it (SPEC §8)',
      );
      return;
    case 'roleChanged':
      recordRoleChange(emitted, log);
      return;
    case 'standbyWaits':
      metrics.crankStandbyWaits.inc({ reason: emitted.reason });
      if (emitted.firstOfStretch) {
        log.warn(
          { reason: emitted.reason, mayTakeOverAt: new Date(emitted.mayTakeOverAtMs).toISOString() },
          "crank: standing by longer: the key's history since the previous read could not all be checked (traffic that lists the authority), so whether another instance signed is unknown; " +
            `the quiet window starts again (in nonce mode at most ${HISTORY_DOUBT_WINDOWS} windows after the latest sighting: the nonces are the signal)`,
        );
      }
      return;
    case 'leaseStep':
      recordLeaseStep(emitted.outcome, log, metrics);
      return;
    case 'leaseStepFailed':
      metrics.crankLeaseEvents.inc({ outcome: 'failed' });
      log.warn({ err: emitted.error }, 'crank: the signing lease step failed; nothing changes, the next cycle reads the lease again');
      return;
    case 'readFailed':
      if (emitted.behindFloor) {
        log.warn(
          { err: emitted.error },
          'crank: reading the trackers failed: every node tried was behind the slot this server already rests on (a lagging node or load-balancer backend); this cycle submits nothing, the next reads again',
        );
      } else log.error({ err: emitted.error }, 'crank: reading the trackers failed; this cycle submits nothing');
      return;
    case 'attempt':
      recordAttempt(emitted, log, metrics);
      return;
    case 'cycleFinished': {
      metrics.crankCycles.inc({ outcome: emitted.outcome });
      metrics.crankCycleDuration.observe(emitted.durationMs / 1000);
      const { report } = emitted;
      const didWork = report.ack_deposit_attempted || report.ack_withdraw_attempted || report.cleanup_attempted > 0;
      // An idle cycle every poll interval is routine: keep it out of the info log.
      const level = emitted.outcome === 'error' ? 'warn' : didWork ? 'info' : 'debug';
      log[level]({ outcome: emitted.outcome, report, durationMs: emitted.durationMs }, 'crank cycle finished');
      return;
    }
    case 'requestsAbandoned':
      log.info({ requests: emitted.requests.length }, 'crank stopping: queued POST /crank/once requests answered with CRANK__STOPPED');
      return;
    case 'pollCoalesced':
      log.debug('crank: POLL while a cycle runs, dropped');
      return;
    case 'dryRunPlanned':
      metrics.crankDryRunPlanned.inc({ action: emitted.action }, emitted.indices.length);
      log.info({ action: emitted.action, indices: emitted.indices, votes: emitted.votes }, `crank: ${emitted.action} dry run, not submitted`);
      return;
  }
}

function recordAttempt(attempt: Extract<CrankEmitted, { type: 'attempt' }>, log: Logger, metrics: Metrics): void {
  const { action, outcome, signatures } = attempt;
  metrics.crankSubmissions.inc({ action, outcome });
  metrics.crankActionDuration.observe({ action }, attempt.durationMs / 1000);
  if (attempt.attempt > 1) metrics.crankRetries.inc({ action });
  if (signatures.length > 0) metrics.crankTransactionsLanded.inc({ action }, signatures.length);

  const line = {
    action,
    indices: attempt.indices,
    attempt: attempt.attempt,
    outcome,
    signatures,
    err: attempt.error ?? undefined,
    durationMs: attempt.durationMs,
  };
  if (outcome !== 'failed') log.info(line, `crank: ${action} ${outcome}`);
  else if (attempt.willRetry) log.warn(line, `crank: ${action} attempt failed, retrying after a backoff`);
  else log.error(line, `crank: ${action} failed, moving on to the next action`);
}

/** The leasing step's outcome: counted; a doubt is a warn line; a lost lease was logged (error) as a role change. */
function recordLeaseStep(outcome: LeaseStepOutcome, log: Logger, metrics: Metrics): void {
  metrics.crankLeaseEvents.inc({ outcome: outcome.kind });
  if (outcome.kind === 'took') log.info({ signature: outcome.signature, slot: outcome.slot }, 'crank: took the signing lease');
  if (outcome.kind === 'not_taken')
    log.info(
      { why: outcome.why, lease: outcome.seen.state },
      'crank: the signing lease was not taken (another instance took it first, or it moved): standing by',
    );
  if (outcome.kind === 'doubt')
    log.warn(
      { why: outcome.why },
      'crank: a read of the signing lease says another instance holds it, and nothing proves it (no two endpoints agree, no transaction of another instance moved it): a doubt on an endpoint; this server keeps signing',
    );
}

/** Once per change, at info: a handoff is routine; a second signer seen while active was logged at error already; a lost lease is one. */
function recordRoleChange({ change, quietWindowMs }: Extract<CrankEmitted, { type: 'roleChanged' }>, log: Logger): void {
  const windowSecs = quietWindowMs / 1000;
  if (change.kind === 'taking_over') {
    const how =
      change.lease === 'released'
        ? 'the signing lease was free (the previous holder released it)'
        : change.lease === 'free'
          ? 'the signing lease was free (no instance held it) and no instance without it signed within the quiet window'
          : `no other instance has signed with this key for ${windowSecs} s (the quiet window)${change.lease === 'taken_over' ? ' and the signing lease is taken over' : ''}`;
    log.info({ quietMs: change.quietMs, quietWindowMs, lease: change.lease }, `crank: taking over: ${how}; this server submits from now on`);
    return;
  }
  if (change.kind === 'lease_lost') {
    log.error(
      { holder: change.holder, proof: change.proof },
      'crank: the signing lease this server held was taken by another instance (proven: see `proof`): another process signs with the same key; this server stands by at once. ' +
        'Run only one instance per signer (SPEC §8): find the other one',
    );
    return;
  }
  const { chain, signature, slot, nonceMove } = change.other;
  log.info(
    { chain, signature, slot, nonceMove, quietWindowMs },
    `crank: standing by: another instance signs with this key; this server submits nothing until that one has been quiet for ${windowSecs} s`,
  );
}

/**
 * Once at the start, at info: an instance that starts as standby submits nothing for at least
 * the quiet window, and an operator who sees no votes should read why rather than suspect a fault.
 */
export function recordStartingRole(role: CrankRole, quietWindowMs: number, log: Logger): void {
  if (role !== 'standby') return;
  log.info(
    { role, quietWindowMs },
    'crank: standing by: this server submits once it holds the signing lease: at its first cycle if the lease is free (released by the previous instance), ' +
      `otherwise once no other instance has signed with this key for ${quietWindowMs / 1000} s (the quiet window) while work waited as long; BRIDGE_HANDOFF_SECS=0 signs from the start`,
  );
}

/**
 * Warn lines a read can start, once per change rather than every cycle: a balance that fell below
 * BRIDGE_MIN_BALANCE_LAMPORTS on a chain, a twin that now stays (a standby has watched another
 * instance sign for longer than BRIDGE_HANDOFF_SECS). Both also degrade /health meanwhile.
 */
export function warningsAfterRead(
  before: HealthFacts,
  after: HealthFacts,
  settings: { minBalanceLamports: number; handoffMs: number },
): Array<Extract<CrankEmitted, { type: 'balanceLow' | 'twinStays' }>> {
  const wasLow = chainsBelowMinimum(before.fees, settings.minBalanceLamports);
  const warnings: Array<Extract<CrankEmitted, { type: 'balanceLow' | 'twinStays' }>> = chainsBelowMinimum(after.fees, settings.minBalanceLamports)
    .filter((chain) => !wasLow.includes(chain))
    .map((chain) => ({ type: 'balanceLow', chain, balance: after.fees![chain].balance, minimum: settings.minBalanceLamports }));
  const twin = twinProblem(after.role, settings.handoffMs);
  if (twin !== null && twinProblem(before.role, settings.handoffMs) === null) warnings.push({ type: 'twinStays', problem: twin });
  return warnings;
}

/** Timestamps and the role from the snapshot's health facts, so /metrics and /health never disagree. */
export function recordHealthGauges(health: HealthFacts, metrics: Metrics): void {
  for (const role of CRANK_ROLES) metrics.crankRole.set({ role }, role === health.role.role ? 1 : 0);
  for (const status of LEASE_STATUSES) metrics.crankLease.set({ status }, status === health.lease.status ? 1 : 0);
  metrics.crankOtherSignerActive.set(otherSignerActiveMs(health.role) / 1000);
  metrics.crankStandby.set(standbyMs(health) / 1000);
  setOrAbsent(metrics.crankLastRun, health.lastRunAtMs);
  setOrAbsent(metrics.crankLastSuccess, health.lastSuccessAtMs);
  setOrAbsent(metrics.crankLastCycleFinished, health.lastCycleFinishedAtMs);
  setOrAbsent(metrics.crankUnlandedSince, health.role.role === 'active' ? health.unlandedSinceMs : null);
}

/**
 * A timestamp gauge in seconds, or no series while it means nothing yet: prom-client shows an
 * unset gauge as 0, and `time() - 0` is an age of decades to every rule that reads one.
 */
function setOrAbsent(gauge: Gauge, ms: number | null): void {
  if (ms === null) gauge.remove();
  else gauge.set(ms / 1000);
}

/** How long the current standby stretch has lasted at the latest read; 0 while active or before the first read. */
function standbyMs({ role, lease, lastRunAtMs }: HealthFacts): number {
  if (role.role !== 'standby' || role.sinceMs === null || lastRunAtMs === null) return 0;
  // Waiting on a lease another instance holds, with nothing to do: that holder is idle, not gone, and nothing waits for a signer (lease.ts).
  const since = lease.status === 'waiting' ? lease.workSinceMs : role.sinceMs;
  return since === null ? 0 : Math.max(0, lastRunAtMs - Math.max(since, role.sinceMs));
}

/** bridge_chain_landing_mode: 1 for each chain's current mode, 0 for the other. */
export function recordLifetimeModes(modes: Record<ChainSide, LifetimeMode>, metrics: Metrics): void {
  for (const chain of CHAINS) for (const mode of LIFETIME_MODES) metrics.landingMode.set({ chain, mode }, modes[chain] === mode ? 1 : 0);
}

/** bridge_health_status: 1 for the current status, 0 for the others. */
function recordHealthStatus(status: HealthStatus, metrics: Metrics): void {
  for (const value of HEALTH_STATUSES) metrics.healthStatus.set({ status: value }, value === status ? 1 : 0);
}

/**
 * Keeps bridge_health_status current at every scrape: a stall is the absence of events, so
 * no event could update it. prom-client calls a metric's `collect` (a documented config
 * option, set on the declared gauge here) right before reading it.
 */
export function publishHealthStatusAtScrape(status: () => HealthStatus, metrics: Metrics): void {
  Object.assign(metrics.healthStatus, { collect: () => recordHealthStatus(status(), metrics) });
}

/**
 * The human-readable `crank.last_action` lines, e.g. "ack_deposit 120..129 (10 votes)",
 * "cleanup_deposit 4 entries (1 already done)", "ack_withdraw 7 (1 vote) failed after 3 attempts",
 * and in a dry run "dry run: ack_deposit 120..129 (10 votes) planned, not submitted".
 */
export function describeLanded(step: CrankStep, indices: readonly number[], report: Pick<ActionReport, 'alreadyDone'>): string {
  const head = describeSubmission(step, indices);
  const alreadyDone = report.alreadyDone.length;
  return step === 'cleanup' && alreadyDone > 0 ? `${head} (${alreadyDone} already done)` : head;
}

export function describeFailed(step: CrankStep, indices: readonly number[], attempts: number): string {
  return `${describeSubmission(step, indices)} failed after ${plural(attempts, 'attempt')}`;
}

/** Dry run: "dry run: ack_deposit 120..129 (10 votes) planned, not submitted". */
export function describePlanned(step: CrankStep, indices: readonly number[]): string {
  return `dry run: ${describeSubmission(step, indices)} planned, not submitted`;
}

function describeSubmission(step: CrankStep, indices: readonly number[]): string {
  const action = STEP_ACTIONS[step];
  if (indices.length === 0) return action;
  if (step === 'cleanup') return `${action} ${plural(indices.length, 'entry', 'entries')}`;
  return `${action} ${describeRange(indices)} (${plural(indices.length, 'vote')})`;
}

/** Votes are consecutive by construction: "120..129", or "120" for one. */
function describeRange(indices: readonly number[]): string {
  const first = indices[0];
  const last = indices[indices.length - 1];
  return first === last ? `${first}` : `${first}..${last}`;
}

function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}
