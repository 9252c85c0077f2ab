import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_TIMER_DELAY_MS, setLongTimeout, sleep } from '../src/time.js';

describe('setLongTimeout', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('shows the hazard it exists for: a plain setTimeout beyond 2^31-1 ms fires after 1 ms', () => {
    const fired = vi.fn();
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    setTimeout(fired, MAX_TIMER_DELAY_MS + 1);
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledOnce();
    warn.mockRestore();
  });

  it.each([
    ['just above one timer', MAX_TIMER_DELAY_MS + 1],
    ['three timers and a bit', 3 * MAX_TIMER_DELAY_MS + 5],
    ['15 years', 15 * 365 * 24 * 3600 * 1000],
  ])('fires exactly at the delay, never early (%s)', (_name, delayMs) => {
    const fired = vi.fn();
    setLongTimeout(fired, delayMs);
    vi.advanceTimersByTime(delayMs - 1);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledOnce();
  });

  it('fires short delays as setTimeout does, including 0', () => {
    const fired = vi.fn();
    setLongTimeout(fired, 0);
    setLongTimeout(fired, 250);
    vi.advanceTimersByTime(0);
    expect(fired).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(250);
    expect(fired).toHaveBeenCalledTimes(2);
  });

  it('clear() stops it in any segment of the chain', () => {
    const fired = vi.fn();
    const timeout = setLongTimeout(fired, 2 * MAX_TIMER_DELAY_MS + 10);
    vi.advanceTimersByTime(MAX_TIMER_DELAY_MS + 5);
    timeout.clear();
    vi.advanceTimersByTime(3 * MAX_TIMER_DELAY_MS);
    expect(fired).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])('rejects the delay %s', (delayMs) => {
    expect(() => setLongTimeout(() => undefined, delayMs)).toThrow(RangeError);
  });
});

describe('setLongTimeout with real timers', () => {
  it('does not keep the process alive: its timer is unref()ed', () => {
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    const timeout = setLongTimeout(() => undefined, 60_000);
    const timer = setTimeoutSpy.mock.results[0]?.value as NodeJS.Timeout;
    setTimeoutSpy.mockRestore();
    expect(timer.hasRef()).toBe(false);
    timeout.clear();
  });
});

describe('sleep', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('resolves after a delay longer than one timer holds, not before', async () => {
    const done = vi.fn();
    void sleep(MAX_TIMER_DELAY_MS * 2, new AbortController().signal).then(done);
    await vi.advanceTimersByTimeAsync(MAX_TIMER_DELAY_MS * 2 - 1);
    expect(done).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toHaveBeenCalledOnce();
  });

  it('rejects with the abort reason and clears its timer', async () => {
    const controller = new AbortController();
    const slept = sleep(10_000, controller.signal);
    const reason = new Error('shutting down');
    controller.abort(reason);
    await expect(slept).rejects.toBe(reason);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects at once when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('already'));
    await expect(sleep(5, controller.signal)).rejects.toThrow('already');
    expect(vi.getTimerCount()).toBe(0);
  });
});
