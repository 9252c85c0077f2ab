import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { quietWindowMs } from '../../src/machines/role.js';
import { bridgeView } from './support/bridge-view.js';
import { metricSample, metricValue } from '../support/metric-value.js';
import { settle, START_SECONDS, startTestCrank, useCrankClock } from './support/test-crank.js';

/**
 * An instance that starts as standby explains itself (docs/crank.md, "Role"): one info line at
 * the start with the quiet window, and a role view that says from when it may sign.
 */

const POLL_MS = 15_000;
const HANDOFF_MS = 60_000;
const WINDOW_SECONDS = quietWindowMs(POLL_MS) / 1000;
const NOTHING_TO_DO = bridgeView({ deposits: [], withdrawals: [] });
const OTHER = { signature: '5OtherInstance', slot: 90, signedHere: false };

function standingByLines(records: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  return records.filter((record) => String(record['msg']).startsWith('crank: standing by'));
}

beforeEach(useCrankClock);
afterEach(() => {
  vi.useRealTimers();
});

describe('a crank that starts as standby', () => {
  it('logs one info line saying so, with the quiet window', async () => {
    const { crank, logs } = startTestCrank(NOTHING_TO_DO, { handoffMs: HANDOFF_MS, pollIntervalMs: POLL_MS });
    await settle();
    await vi.advanceTimersByTimeAsync(2 * POLL_MS);
    expect(standingByLines(logs.records())).toEqual([
      expect.objectContaining({
        level: 'info',
        role: 'standby',
        quietWindowMs: 55_000,
        msg:
          'crank: standing by: this server submits once it holds the signing lease: at its first cycle if the lease is free (released by the previous instance), ' +
          'otherwise once no other instance has signed with this key for 55 s (the quiet window) while work waited as long; BRIDGE_HANDOFF_SECS=0 signs from the start',
      }),
    ]);
    await crank.stop(0);
  });

  it('says from when it may sign: the first read plus the window, moved by each transaction of another instance, then active', async () => {
    const { chains, crank } = startTestCrank(NOTHING_TO_DO, { handoffMs: HANDOFF_MS, pollIntervalMs: POLL_MS });
    await settle();
    expect(crank.role()).toEqual({ role: 'standby', may_sign_at: START_SECONDS + WINDOW_SECONDS });
    chains.authorityView.target.transactions = [OTHER];
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(crank.role()).toEqual({ role: 'standby', may_sign_at: START_SECONDS + POLL_MS / 1000 + WINDOW_SECONDS });
    // Quiet from 15 s: the reads at 30, 45 and 60 s stand by, the one at 75 s (15 + 55 = 70 s and after) takes over.
    await vi.advanceTimersByTimeAsync(3 * POLL_MS);
    expect(crank.role()?.role).toBe('standby');
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(crank.role()).toEqual({ role: 'active' });
    await crank.stop(0);
  });

  it("publishes how long it has stood by, the longest its window allows, and each chain's landing mode once read", async () => {
    const { chains, crank, metrics } = startTestCrank(NOTHING_TO_DO, { handoffMs: HANDOFF_MS, pollIntervalMs: POLL_MS });
    chains.modes = { source: 'nonce', target: 'blockhash' };
    expect(await metricSample(metrics.landingMode, { chain: 'source', mode: 'nonce' })).toBeUndefined();
    await settle();
    expect(await metricValue(metrics.crankStandbyWindow)).toBe((2 * quietWindowMs(POLL_MS) + POLL_MS) / 1000);
    expect(await metricValue(metrics.landingMode, { chain: 'source', mode: 'nonce' })).toBe(1);
    expect(await metricValue(metrics.landingMode, { chain: 'source', mode: 'blockhash' })).toBe(0);
    expect(await metricValue(metrics.landingMode, { chain: 'target', mode: 'blockhash' })).toBe(1);
    await vi.advanceTimersByTimeAsync(2 * POLL_MS);
    expect(await metricValue(metrics.crankStandby)).toBe((2 * POLL_MS) / 1000);
    chains.modes = { source: 'blockhash', target: 'blockhash' };
    await vi.advanceTimersByTimeAsync(4 * POLL_MS);
    expect(crank.role()).toEqual({ role: 'active' });
    expect(await metricValue(metrics.crankStandby)).toBe(0);
    expect(await metricValue(metrics.landingMode, { chain: 'source', mode: 'nonce' })).toBe(0);
    await crank.stop(0);
  });

  it('before its first read, counts the window from now: no earlier time is possible', () => {
    const { crank } = startTestCrank(NOTHING_TO_DO, { handoffMs: HANDOFF_MS, pollIntervalMs: POLL_MS });
    expect(crank.role()).toEqual({ role: 'standby', may_sign_at: START_SECONDS + WINDOW_SECONDS });
    return crank.stop(0);
  });
});

describe('a crank without a handoff (BRIDGE_HANDOFF_SECS=0)', () => {
  it('is active from the start and logs no standing-by line', async () => {
    const { crank, logs } = startTestCrank(NOTHING_TO_DO, { handoffMs: 0, pollIntervalMs: POLL_MS });
    await settle();
    expect(crank.role()).toEqual({ role: 'active' });
    expect(standingByLines(logs.records())).toEqual([]);
    await crank.stop(0);
  });
});
