import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RETRY_BACKOFF_CAP_MS, retryBackoffDelay } from '../../src/machines/delays.js';
import { MAX_TIMER_DELAY_MS } from '../../src/time.js';
import { bridgeView, deposits } from '../../test/machines/support/bridge-view.js';
import { fails, programError, retryableSubmitError } from '../../test/machines/support/scripted-chains.js';
import { settle, startTestCrank, useCrankClock } from '../../test/machines/support/test-crank.js';
import { checkProperty, propertyProfile } from '../support/profile.js';

/**
 * Retry backoff: every delay is bounded (equal jitter in [d/2, d], d = min(cap, base * 2^(n-1)),
 * never beyond one Node timer), and the crank makes exactly BRIDGE_CRANK_MAX_ATTEMPTS attempts
 * of a failing action, waiting such a delay before each retry.
 */

const long = propertyProfile() === 'long';

/** The ceiling d of the n-th backoff, from SPEC §3 and docs/crank.md (written out, not imported). */
function ceiling(failedAttempts: number, baseMs: number): number {
  const cap = Math.min(MAX_TIMER_DELAY_MS, Math.max(RETRY_BACKOFF_CAP_MS, baseMs));
  return Math.min(cap, baseMs * 2 ** Math.min(failedAttempts - 1, 1023));
}

const unit = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

describe('retry backoff (pure)', () => {
  it('is a whole number of milliseconds in [d/2, d], never above one Node timer, and grows with the random draw', async () => {
    await checkProperty(
      'retryBackoffDelay bounds',
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2_000 }),
        fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })),
        unit,
        unit,
        async (failedAttempts, baseMs, r1, r2) => {
          const d = ceiling(failedAttempts, baseMs);
          const delay = retryBackoffDelay(failedAttempts, baseMs, () => r1);
          expect(Number.isInteger(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(Math.floor(d / 2));
          expect(delay).toBeLessThanOrEqual(d);
          expect(delay).toBeLessThanOrEqual(MAX_TIMER_DELAY_MS);
          // 0 means "retry at once", for a base of 0 only; any other delay is a real timer's.
          expect(delay === 0).toBe(baseMs === 0);
          const [low, high] = r1 <= r2 ? [r1, r2] : [r2, r1];
          expect(retryBackoffDelay(failedAttempts, baseMs, () => low)).toBeLessThanOrEqual(retryBackoffDelay(failedAttempts, baseMs, () => high));
        },
      ),
      long ? 100_000 : 2_000,
    );
  });
});

describe('retry attempts of the crank (startCrank over an in-memory BridgeChains, fake timers)', () => {
  beforeEach(useCrankClock);
  afterEach(() => {
    vi.useRealTimers();
  });

  it('makes exactly BRIDGE_CRANK_MAX_ATTEMPTS attempts of an action that keeps failing, each retry after a bounded backoff', async () => {
    await checkProperty(
      'attempts = max',
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 5_000 }),
        fc.boolean(),
        async (maxAttempts, retryBackoffMs, retryable) => {
          const failure = retryable ? retryableSubmitError() : programError('NotAnAuthority');
          const { chains, crank } = startTestCrank(bridgeView({ deposits: deposits(2), withdrawals: [] }), {
            maxAttempts,
            retryBackoffMs,
            // No second cycle within the waits below.
            pollIntervalMs: MAX_TIMER_DELAY_MS,
            before: (scripted) => scripted.script('ackDeposits', ...Array.from({ length: maxAttempts + 1 }, () => fails(failure))),
          });
          try {
            await settle();
            // Long enough for every backoff the attempts can take (a 0 ms one takes no timer).
            await vi.advanceTimersByTimeAsync(
              Array.from({ length: maxAttempts }, (_, n) => ceiling(n + 1, retryBackoffMs)).reduce((a, b) => a + b, 0) + 1,
            );
            const expected = retryable ? maxAttempts : 1;
            const submits = chains.callsOf('ackDeposits');
            expect(submits).toHaveLength(expected);
            // Each retry re-reads first, a backoff after the failed attempt.
            const reads = chains.callsOf('readState').slice(1, expected);
            reads.forEach((read, n) => {
              const waited = read.at - submits[n]!.at;
              expect(waited).toBeGreaterThanOrEqual(Math.floor(ceiling(n + 1, retryBackoffMs) / 2));
              expect(waited).toBeLessThanOrEqual(ceiling(n + 1, retryBackoffMs));
            });
            const attempts = retryable ? `${maxAttempts} attempt${maxAttempts === 1 ? '' : 's'}` : '1 attempt';
            expect(crank.health().last_error).toContain(`failed after ${attempts}`);
          } finally {
            await crank.stop(0);
          }
        },
      ),
      long ? 2_000 : 60,
    );
  });

  it('retries at once with a backoff of 0: every attempt without the clock moving', async () => {
    const { chains, crank } = startTestCrank(bridgeView({ deposits: deposits(1), withdrawals: [] }), {
      maxAttempts: 5,
      retryBackoffMs: 0,
      pollIntervalMs: MAX_TIMER_DELAY_MS,
      before: (scripted) => scripted.script('ackDeposits', ...Array.from({ length: 5 }, () => fails(retryableSubmitError()))),
    });
    try {
      await settle();
      const submits = chains.callsOf('ackDeposits');
      expect(submits).toHaveLength(5);
      expect(submits.every((submit) => submit.at === submits[0]!.at)).toBe(true);
      expect(crank.health().last_error).toContain('failed after 5 attempts');
    } finally {
      await crank.stop(0);
    }
  });
});
