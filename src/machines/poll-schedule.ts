import { MAX_TIMER_DELAY_MS } from '../time.js';

/**
 * When the next cycle starts (pure; the machine's `idle` state arms one timer at a time).
 * Cycles run every BRIDGE_POLL_INTERVAL_SECS from the end of the previous one. The interval
 * may be longer than one Node timer holds (2^31-1 ms, about 24.8 days): idle then waits in
 * chunks of at most that length, counting what it has waited, and re-arms until the whole
 * interval has passed. A cycle that left a backlog is followed at once (delay 0, a fresh
 * macrotask, so HTTP requests and timers run in between).
 */

export interface PollSchedule {
  pollIntervalMs: number;
  /** Time idle has already waited since the last cycle ended, in whole chunks. */
  idleWaitedMs: number;
  /** The last cycle left work beyond one batch and the back-to-back bound allows another. */
  drainBacklog: boolean;
}

/** The delay for the next idle timer. */
export function nextCycleDelay(schedule: PollSchedule): number {
  if (schedule.drainBacklog) return 0;
  return Math.min(remainingWait(schedule), MAX_TIMER_DELAY_MS);
}

/** When the idle timer fires: does it end the wait (true) or was it one chunk of a longer one? */
export function isCycleDue(schedule: PollSchedule): boolean {
  return schedule.drainBacklog || remainingWait(schedule) <= MAX_TIMER_DELAY_MS;
}

/** The wait after one more chunk that did not end it. */
export function idleWaitAfterChunk(schedule: PollSchedule): number {
  return schedule.idleWaitedMs + MAX_TIMER_DELAY_MS;
}

function remainingWait(schedule: PollSchedule): number {
  return Math.max(0, schedule.pollIntervalMs - schedule.idleWaitedMs);
}
