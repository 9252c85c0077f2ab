import { describe, expect, it } from 'vitest';
import { RETRY_BACKOFF_CAP_MS, retryBackoffDelay } from '../../src/machines/delays.js';
import { MAX_TIMER_DELAY_MS } from '../../src/time.js';

const LOWEST = () => 0;
const HIGHEST = () => 1 - Number.EPSILON;

describe('retryBackoffDelay', () => {
  it('doubles from the base per failed attempt, with equal jitter in [d/2, d]', () => {
    for (const [failed, ceiling] of [
      [1, 1000],
      [2, 2000],
      [3, 4000],
      [4, 8000],
    ] as const) {
      expect(retryBackoffDelay(failed, 1000, LOWEST)).toBe(ceiling / 2);
      expect(retryBackoffDelay(failed, 1000, HIGHEST)).toBe(ceiling - 1);
      expect(retryBackoffDelay(failed, 1000, () => 0.5)).toBe((ceiling * 3) / 4);
    }
  });

  it('stops growing at the cap', () => {
    expect(retryBackoffDelay(7, 1000, HIGHEST)).toBe(RETRY_BACKOFF_CAP_MS - 1);
    expect(retryBackoffDelay(50, 1000, LOWEST)).toBe(RETRY_BACKOFF_CAP_MS / 2);
  });

  it('keeps a configured base above the cap as the cap', () => {
    expect(retryBackoffDelay(1, 120_000, LOWEST)).toBe(60_000);
    expect(retryBackoffDelay(5, 120_000, HIGHEST)).toBe(119_999);
  });

  it('never exceeds one Node timer, whatever the base and attempt count', () => {
    for (const base of [1, 1000, 2 ** 40, Number.MAX_SAFE_INTEGER]) {
      for (const failed of [1, 2, 64, 1100, 4_294_967_295]) {
        const delay = retryBackoffDelay(failed, base, HIGHEST);
        expect(Number.isSafeInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(MAX_TIMER_DELAY_MS);
      }
    }
  });

  it('retries at once with a base of 0', () => {
    expect(retryBackoffDelay(3, 0, HIGHEST)).toBe(0);
  });

  it('waits at least 1 ms with any other base (what Node waits for a 0 ms timer anyway)', () => {
    expect(retryBackoffDelay(1, 1, LOWEST)).toBe(1);
    expect(retryBackoffDelay(1, 1, HIGHEST)).toBe(1);
    expect(retryBackoffDelay(2, 1, LOWEST)).toBe(1);
  });

  it('uses Math.random by default and stays within the bounds', () => {
    for (let n = 0; n < 100; n++) {
      const delay = retryBackoffDelay(2, 1000);
      expect(delay).toBeGreaterThanOrEqual(1000);
      expect(delay).toBeLessThanOrEqual(2000);
    }
  });
});
