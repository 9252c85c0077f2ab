import { describe, expect, it } from 'vitest';
import { worstCaseActionMs, worstCaseCycleMs } from '../../src/machines/cycle-bound.js';

describe('cycle bound (provisional)', () => {
  it('with the defaults: 3 attempts of 210 s and two backoffs per action, three actions after an 80 s read', () => {
    const defaults = { maxAttempts: 3, retryBackoffMs: 1000, rpcTimeoutMs: 10_000 };
    expect(worstCaseActionMs(defaults)).toBe(3 * 210_000 + 1000 + 2000);
    expect(worstCaseCycleMs(defaults)).toBe(80_000 + 3 * 633_000);
  });

  it('backoffs stop growing at the 60 s cap, and a huge attempt count stays finite', () => {
    const one = { maxAttempts: 1, retryBackoffMs: 1000, rpcTimeoutMs: 1000 };
    expect(worstCaseActionMs(one)).toBe(9_000 + 120_000);
    const many = { maxAttempts: 10, retryBackoffMs: 30_000, rpcTimeoutMs: 1000 };
    // 30 s, then the 60 s cap eight times.
    expect(worstCaseActionMs(many)).toBe(10 * 129_000 + 30_000 + 8 * 60_000);
    expect(Number.isFinite(worstCaseCycleMs({ maxAttempts: 4_294_967_295, retryBackoffMs: 1000, rpcTimeoutMs: 1000 }))).toBe(true);
  });
});
