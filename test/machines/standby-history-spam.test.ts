import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HISTORY_DOUBT_WINDOWS, quietWindowMs } from '../../src/machines/role.js';
import { bridgeView } from './support/bridge-view.js';
import { settle, startTestCrank, useCrankClock } from './support/test-crank.js';
import type { ScriptedChains } from './support/scripted-chains.js';

/**
 * History that stays incomplete (spam that lists the authority: more entries per read than the
 * lookups check) restarts a standby's quiet window at every read (docs/crank.md, "Role"). At the
 * production 15 s poll: in nonce mode it holds the standby at most HISTORY_DOUBT_WINDOWS windows
 * after its first read (the nonces stayed quiet), with a warn line and a metric saying why; in
 * blockhash mode (the history is the only signal) it holds it for as long as it lasts.
 */

const POLL_MS = 15_000;
const WINDOW_MS = quietWindowMs(POLL_MS);
const NOTHING_TO_DO = bridgeView({ deposits: [], withdrawals: [] });

beforeEach(useCrankClock);
afterEach(() => {
  vi.useRealTimers();
});

function spammed(nonceMode: boolean) {
  return (chains: ScriptedChains) => {
    // Every read: the history left entries unchecked (readAuthority clears only the transactions).
    chains.authorityView.target.historyIncomplete = true;
    if (nonceMode) chains.modes = { source: 'nonce', target: 'nonce' };
  };
}

describe('a standby under history spam', () => {
  it('in nonce mode takes over at most two windows after its first read, saying why it waited', async () => {
    const { crank, logs, metrics } = startTestCrank(NOTHING_TO_DO, { handoffMs: 300_000, pollIntervalMs: POLL_MS, before: spammed(true) });
    await settle();
    const bound = HISTORY_DOUBT_WINDOWS * WINDOW_MS;
    await vi.advanceTimersByTimeAsync(bound - POLL_MS);
    expect(crank.role()?.role).toBe('standby');
    // The read at or after the bound takes over: within one poll interval of it.
    await vi.advanceTimersByTimeAsync(2 * POLL_MS);
    expect(crank.role()).toEqual({ role: 'active' });
    const waits = logs.records().filter((record) => String(record['msg']).startsWith('crank: standing by longer'));
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatchObject({ level: 'warn', reason: 'history_incomplete' });
    expect(await metrics.registry.metrics()).toMatch(/^bridge_crank_standby_window_restarts_total\{reason="history_incomplete"\} [1-9]/m);
    await crank.stop(0);
  });

  it('in blockhash mode stays a standby for as long as the history stays incomplete', async () => {
    const { crank } = startTestCrank(NOTHING_TO_DO, { handoffMs: 300_000, pollIntervalMs: POLL_MS, before: spammed(false) });
    await settle();
    await vi.advanceTimersByTimeAsync(10 * WINDOW_MS);
    expect(crank.role()?.role).toBe('standby');
    await crank.stop(0);
  });
});
