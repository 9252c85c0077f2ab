import { EventEmitter, once } from 'node:events';
import { createCrankActivityLog } from '../../src/machines/crank-activity.js';
import type { CrankService } from '../../src/machines/crank-service.js';
import type { CrankPollOutcome, CrankReport, CrankRoleView } from '../../src/machines/crank-types.js';
import type { CrankHealth, HealthReport, HealthStatus } from '../../src/machines/health.js';

interface PendingCycle {
  resolve(report: CrankReport): void;
  reject(err: unknown): void;
}

/**
 * A CrankService whose cycles end when the test says so, for testing the HTTP layer on its own:
 * which report reaches the client, that /health never waits for a running cycle, what
 * shutdown asks of the crank. The crank's own run lock is tested with the machine.
 */
export class ControlledCrank implements CrankService {
  snapshot: CrankHealth = {
    enabled: true,
    last_run_at: null,
    last_success_at: null,
    last_error: null,
    last_action: null,
    total_actions_submitted: 0,
  };
  readonly activity = createCrankActivityLog();
  readonly stopDeadlines: number[] = [];
  private readonly pending: PendingCycle[] = [];
  private readonly events = new EventEmitter();
  private started = 0;
  private abandoned = 0;

  /** What status() answers. */
  healthStatus: HealthStatus = 'ok';

  /** What role() answers. */
  roleView: CrankRoleView = { role: 'active' };

  role(): CrankRoleView {
    return this.roleView;
  }

  health(): CrankHealth {
    return this.snapshot;
  }

  status(): HealthStatus {
    return this.healthStatus;
  }

  report(): HealthReport {
    return { status: this.healthStatus, crank: this.snapshot };
  }

  /** Honours `signal` as the CrankService contract says: the caller's promise rejects with its reason. */
  runOnce(signal?: AbortSignal): Promise<CrankReport> {
    return new Promise((resolve, reject) => {
      const cycle = { resolve, reject };
      this.pending.push(cycle);
      this.started += 1;
      signal?.addEventListener('abort', () => {
        this.pending.splice(this.pending.indexOf(cycle), 1);
        this.abandoned += 1;
        reject(signal.reason);
        this.events.emit('abandoned');
      });
      this.events.emit('cycle');
    });
  }

  /** Resolves once `count` callers have aborted their request (bounded by the test timeout). */
  async requestsAbandoned(count: number): Promise<void> {
    while (this.abandoned < count) await once(this.events, 'abandoned');
  }

  /** What the next poll() answers; every call is counted. */
  pollOutcome: CrankPollOutcome = 'started';
  polls = 0;

  poll(): CrankPollOutcome {
    this.polls += 1;
    return this.pollOutcome;
  }

  async stop(deadlineMs: number): Promise<void> {
    this.stopDeadlines.push(deadlineMs);
  }

  /** Resolves once `count` cycles have been requested in total (bounded by the test timeout). */
  async cyclesRequested(count: number): Promise<void> {
    while (this.started < count) await once(this.events, 'cycle');
  }

  finishNext(report: CrankReport): void {
    this.next().resolve(report);
  }

  failNext(err: unknown): void {
    this.next().reject(err);
  }

  private next(): PendingCycle {
    const cycle = this.pending.shift();
    if (cycle === undefined) throw new Error('no crank cycle is waiting');
    return cycle;
  }
}
