import { afterEach, describe, expect, it } from 'vitest';
import type { CrankReport } from '../../src/machines/crank-types.js';
import { basicAuth } from '../support/http-app.js';
import { banksCaughtUp, NOTHING_ATTEMPTED, runRound, startBridgeCranks } from './support/cranks.js';
import { startCrankServer } from './support/crank-server.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { deposit } from './support/transactions.js';

/**
 * One authority's bridge server as src/index.ts wires it (the real crank, its metrics and
 * logger, buildApp with admin credentials) on a real 127.0.0.1 port; its cycles are driven
 * with POST /crank/once, and /health and /metrics are read back after each step.
 */

const CREDENTIALS = { username: 'operator', password: 'integration-password' };
const ADMIN = { authorization: basicAuth(CREDENTIALS.username, CREDENTIALS.password) };

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

async function crankOnce(url: string): Promise<CrankReport> {
  const response = await fetch(`${url}/crank/once`, { method: 'POST', headers: ADMIN, signal: AbortSignal.timeout(10_000) });
  expect(response.status).toBe(200);
  return (await response.json()) as CrankReport;
}

async function health(url: string) {
  const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(10_000) });
  expect(response.status).toBe(200);
  return (await response.json()) as { status: string; service: string; crank: Record<string, unknown> };
}

describe('a bridge server over HTTP', () => {
  it('POST /crank/once drives the cycles; /health and /metrics report what happened', async () => {
    const startedAt = Math.floor(Date.now() / 1000);
    bridge = await startDevnetBridge();
    const cranks = await startBridgeCranks(bridge, [0, 1, 2]);
    const [a, b, c] = cranks;
    const url = await startCrankServer(bridge, a!, CREDENTIALS);

    expect(await health(url)).toEqual({
      status: 'ok',
      service: 'bridge-operator-server',
      crank: expect.objectContaining({ enabled: true, last_error: null, last_action: null, total_actions_submitted: 0 }),
    });
    const unauthenticated = await fetch(`${url}/crank/once`, { method: 'POST', signal: AbortSignal.timeout(10_000) });
    expect(unauthenticated.status).toBe(401);

    await deposit(bridge, { amount: 100n, sourceMint: bridge.world.tokenPairs.frozen.sourceMint });
    await deposit(bridge, { amount: 600n, sourceMint: bridge.world.tokenPairs.lowVault.sourceMint });
    expect(await crankOnce(url)).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true, role: 'active' });
    // Authority 1 finalizes both (Rejected); authority 2 votes late and proposes the results to the source.
    await runRound([b!, c!]);

    // A read that fails on every try (retries included) fails the cycle.
    bridge.pair.source.faults.set({ methods: { getAccountInfo: { errorRate: 1, errorKind: 'http500' } } });
    expect(await crankOnce(url)).toEqual({ ...NOTHING_ATTEMPTED, role: 'active' });
    expect((await health(url)).crank.last_error).toMatch(/^reading the trackers failed: getAccountInfo on the source chain RPC/);
    bridge.pair.source.faults.clear();

    // Each cycle below acts on what the one before it wrote: the source is read at finalized.
    await banksCaughtUp(bridge);
    expect(await crankOnce(url)).toEqual({ ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true, role: 'active' });
    expect((await health(url)).crank).toMatchObject({ last_error: null, last_action: 'ack_withdraw 0..1 (2 votes)' });
    await banksCaughtUp(bridge);
    // Entry 0's cleanup is this authority's turn. Entry 1's is the first voter's from slot 1 on (docs/crank.md
    // "Cleanup turns"): authority 2's until authority 1 votes late, authority 1's from the read that shows that vote.
    expect(await crankOnce(url)).toEqual({ ...NOTHING_ATTEMPTED, cleanup_attempted: 1, cleanup_completed: 1, role: 'active' });
    expect(await b!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true });
    await banksCaughtUp(bridge);
    expect(await b!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, cleanup_attempted: 1, cleanup_completed: 1 });

    await banksCaughtUp(bridge);
    // Two requests at once: the run lock queues the second behind the first; each gets its own cycle's report.
    const idle = { ...NOTHING_ATTEMPTED, role: 'active' };
    expect(await Promise.all([crankOnce(url), crankOnce(url)])).toEqual([idle, idle]);

    const { crank } = await health(url);
    expect(crank).toMatchObject({ enabled: true, last_error: null, last_action: 'cleanup_deposit 1 entry', total_actions_submitted: 3 });
    expect(crank.last_run_at).toBeGreaterThanOrEqual(startedAt);
    expect(crank.last_success_at).toBeGreaterThanOrEqual(startedAt);
    expect(crank.last_run_at).toBeGreaterThanOrEqual(crank.last_success_at as number);

    const metrics = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
    // Cycles: startup, the harness's first request, then six over HTTP; one of them failed its read.
    expect(metrics).toContain('bridge_crank_cycles_total{outcome="ok"} 7');
    expect(metrics).toContain('bridge_crank_cycles_total{outcome="error"} 1');
    for (const action of ['ack_deposit', 'ack_withdraw', 'cleanup_deposit']) {
      expect(metrics).toContain(`bridge_crank_transactions_landed_total{action="${action}"} 1`);
    }
    expect(metrics).toContain('bridge_crank_enabled 1');
    expect(metrics).toContain(`bridge_crank_last_success_timestamp_seconds ${crank.last_success_at}`);

    await runRound([b!, c!]);
    expectSettled(bridge, 2);
    await expectTransactionsAccounted(bridge, cranks);
  });
});
