import { afterEach, describe, expect, it } from 'vitest';
import type { CrankRoleView } from '../../src/machines/crank-types.js';
import { quietWindowMs } from '../../src/machines/role.js';
import { bridgeView } from '../machines/support/bridge-view.js';
import { startTestCrank } from '../machines/support/test-crank.js';
import { startTestApp, type TestApp } from '../support/http-app.js';

/**
 * A crank that starts as standby (BRIDGE_HANDOFF_SECS > 0), run as the process runs it and asked
 * over HTTP: POST /crank/once, POST /crank/poll and GET /crank/activity say that it stands by and
 * from when it may sign, so a report of nothing attempted is not read as a bridge with no work.
 */

// Long enough that no timer cycle runs during the test: every cycle is the startup one or asked for.
const POLL_MS = 600_000;
const NOTHING_ATTEMPTED = { ack_deposit_attempted: false, ack_withdraw_attempted: false, cleanup_attempted: 0, cleanup_completed: 0 };

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function post(path: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${app!.url}${path}`, { method: 'POST' });
  expect(response.ok, path).toBe(true);
  return (await response.json()) as Record<string, unknown>;
}

describe('the answers of a crank that stands by', () => {
  it('carry the role and, in unix seconds, the first read plus the quiet window', async () => {
    const startedMs = Date.now();
    const { crank } = startTestCrank(bridgeView({ deposits: [], withdrawals: [] }), { handoffMs: 60_000, pollIntervalMs: POLL_MS });
    app = await startTestApp({ crank });
    const once = await post('/crank/once');
    const answeredMs = Date.now();
    expect(once).toMatchObject({ ...NOTHING_ATTEMPTED, role: 'standby' });
    const windowMs = quietWindowMs(POLL_MS);
    expect(once['may_sign_at']).toBeGreaterThanOrEqual(Math.ceil((startedMs + windowMs) / 1000));
    expect(once['may_sign_at']).toBeLessThanOrEqual(Math.ceil((answeredMs + windowMs) / 1000));
    const role: CrankRoleView = { role: 'standby', may_sign_at: once['may_sign_at'] as number };
    expect(await post('/crank/poll')).toEqual({ status: expect.stringMatching(/^(started|coalesced)$/), ...role });
    const activity = (await (await fetch(`${app.url}/crank/activity`)).json()) as { role: CrankRoleView };
    expect(activity.role).toEqual(role);
    await crank.stop(1000);
  });

  it('of an active crank carry the role alone', async () => {
    const { crank } = startTestCrank(bridgeView({ deposits: [], withdrawals: [] }), { handoffMs: 0, pollIntervalMs: POLL_MS });
    app = await startTestApp({ crank });
    expect(await post('/crank/once')).toEqual({ ...NOTHING_ATTEMPTED, role: 'active' });
    await crank.stop(1000);
  });
});
