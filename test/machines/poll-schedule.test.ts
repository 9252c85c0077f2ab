import { describe, expect, it } from 'vitest';
import { idleWaitAfterChunk, isCycleDue, nextCycleDelay, type PollSchedule } from '../../src/machines/delays.js';
import { MAX_TIMER_DELAY_MS } from '../../src/time.js';

const schedule = (pollIntervalMs: number, idleWaitedMs = 0, drainBacklog = false): PollSchedule => ({
  pollIntervalMs,
  idleWaitedMs,
  drainBacklog,
});

describe('poll schedule', () => {
  it('waits the whole interval in one timer when it fits', () => {
    expect(nextCycleDelay(schedule(15_000))).toBe(15_000);
    expect(isCycleDue(schedule(15_000))).toBe(true);
    expect(nextCycleDelay(schedule(MAX_TIMER_DELAY_MS))).toBe(MAX_TIMER_DELAY_MS);
    expect(isCycleDue(schedule(MAX_TIMER_DELAY_MS))).toBe(true);
  });

  it('waits an interval longer than one timer in chunks, without ever arming more than 2^31-1 ms', () => {
    const interval = 2 * MAX_TIMER_DELAY_MS + 5;
    let current = schedule(interval);
    const delays: number[] = [];
    while (!isCycleDue(current)) {
      delays.push(nextCycleDelay(current));
      current = { ...current, idleWaitedMs: idleWaitAfterChunk(current) };
    }
    delays.push(nextCycleDelay(current));
    expect(delays).toEqual([MAX_TIMER_DELAY_MS, MAX_TIMER_DELAY_MS, 5]);
    expect(delays.reduce((a, b) => a + b, 0)).toBe(interval);
  });

  it('starts the next cycle at once while draining a backlog', () => {
    expect(nextCycleDelay(schedule(15_000, 0, true))).toBe(0);
    expect(isCycleDue(schedule(3 * MAX_TIMER_DELAY_MS, 0, true))).toBe(true);
  });

  it('treats a zero interval as back-to-back cycles', () => {
    expect(nextCycleDelay(schedule(0))).toBe(0);
    expect(isCycleDue(schedule(0))).toBe(true);
  });
});
