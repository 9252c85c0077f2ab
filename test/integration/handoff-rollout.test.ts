import { beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '../../src/time.js';
import { ensureBuilt } from '../support/server-process.js';
import { waitFor } from '../support/wait-for.js';
import { landedSignatures, serverHealth } from './support/authority-server.js';
import { landedTransactionsOf } from '../support/base-fees.js';
import { landedStatus, landedTransactionsPaidBy } from './support/chain-state.js';
import {
  bridgeWithActiveServer,
  errorLines,
  failedAttempts,
  leaseTransactions,
  metric,
  settleAll,
  startServer,
  steadyTraffic,
  TAKEOVER_BOUND_MS,
  takeOvers,
  UNCANCELLED,
  watchHealth,
  WINDOW_MS,
} from './support/handoff.js';

/**
 * Handing the authority over between two real servers with one key at production timing
 * (test/integration/support/handoff.ts): a rolling deploy under steady traffic, and a twin that
 * stays. The two scenarios run side by side; handoff-takeover.test.ts holds the other two.
 */

beforeAll(() => {
  ensureBuilt();
}, 120_000);

describe.concurrent('handoff between two instances of one signer: a rollout and a twin', () => {
  it('rolling deploy under steady traffic: B stands by during the overlap, takes over after SIGTERM to A; no error, no foreign signature, no repeated vote', async ({
    onTestFinished,
  }) => {
    const { b, a, startBalances } = await bridgeWithActiveServer(onTestFinished);
    const paidBefore = new Set(landedTransactionsOf(b.pair, b.authorities[0]!.publicKey).map((paid) => paid.signature));
    const traffic = steadyTraffic(b, 500);
    // A's first votes under the traffic (its poll is 1 s) land while B starts.
    await sleep(1_000, UNCANCELLED);

    const second = await startServer(b);
    const watch = watchHealth(second);
    // An overlap well inside B's quiet window (WINDOW_MS): B must stand by through it whatever its length.
    await sleep(5_000, UNCANCELLED);
    expect(await serverHealth(second)).toMatchObject({ code: 200, status: 'ok', role: 'standby' });
    expect(landedSignatures(second)).toEqual([]);

    const stoppedAt = Date.now();
    a.process.child.kill('SIGTERM');
    expect(await a.process.exited).toEqual({ code: 0, signal: null });
    await waitFor(() => takeOvers(second).length > 0, { timeoutMs: TAKEOVER_BOUND_MS, intervalMs: 100, what: 'B taking over' });
    const tookOverMs = Date.now() - stoppedAt;
    await sleep(3_000, UNCANCELLED);
    const count = await traffic.stop();
    await settleAll(b, count);
    const seen = await watch.stop();

    // B answered ok all along, as standby and then as the active one.
    expect(seen.filter((h) => h.status !== 'ok')).toEqual([]);
    expect(seen.at(-1)).toMatchObject({ status: 'ok', role: 'active' });
    expect(tookOverMs).toBeLessThanOrEqual(TAKEOVER_BOUND_MS);
    expect(takeOvers(second)).toHaveLength(1);
    // After SIGTERM, A submitted nothing new: at most the submission that was running lands.
    const logsOfA = a.process.logs();
    const shutdownAt = logsOfA.findIndex((record) => record['msg'] === 'shutting down');
    expect(shutdownAt).toBeGreaterThan(0);
    expect(logsOfA.slice(shutdownAt).filter((record) => record['attempt'] !== undefined).length).toBeLessThanOrEqual(1);
    for (const server of [a, second]) {
      expect(errorLines(server)).toEqual([]);
      expect(failedAttempts(server)).toEqual([]);
    }
    expect(await metric(second, 'bridge_foreign_signatures_total{chain="target"}')).toBe(0);
    expect(await metric(second, 'bridge_foreign_signatures_total{chain="source"}')).toBe(0);
    // Every transaction of the key landed once and cleanly: B's started after A's last.
    const signatures = [...landedSignatures(a), ...landedSignatures(second)];
    expect(landedSignatures(second).length).toBeGreaterThan(0);
    expect(new Set(signatures).size).toBe(signatures.length);
    expect(signatures.map((signature) => landedStatus(b, signature)?.err)).toEqual(signatures.map(() => null));
    // Besides the votes: A's taking and release (two transactions) of the signing lease, and B's taking.
    expect([...leaseTransactions(a), ...leaseTransactions(second)]).toHaveLength(4);
    // The chain's own list of what the key paid for since A became active: each one a server logged (named here if not).
    const known = new Set([...signatures, ...leaseTransactions(a), ...leaseTransactions(second)]);
    const unknown = landedTransactionsOf(b.pair, b.authorities[0]!.publicKey)
      .filter((paid) => !paidBefore.has(paid.signature) && !known.has(paid.signature))
      .map(({ wire: _, ...named }) => named);
    expect(unknown).toEqual([]);
    expect(landedTransactionsPaidBy(b, 0, startBalances)).toBe(signatures.length + 4);
    console.info(`rollout: ${count} transfers, B took over ${tookOverMs} ms after SIGTERM to A (window ${WINDOW_MS} ms)`);
  }, 180_000);

  it("a twin that stays past BRIDGE_HANDOFF_SECS makes the standby one degraded, naming the other signer's latest transaction", async ({
    onTestFinished,
  }) => {
    const handoffSecs = 10;
    const { b, a } = await bridgeWithActiveServer(onTestFinished);
    const traffic = steadyTraffic(b, 500);
    const twin = await startServer(b, { BRIDGE_HANDOFF_SECS: String(handoffSecs) });
    const startedAt = Date.now();
    await waitFor(async () => (await serverHealth(twin)).status === 'degraded', {
      timeoutMs: (handoffSecs + 30) * 1000,
      intervalMs: 250,
      what: 'the twin degraded',
    });
    const degradedAfterMs = Date.now() - startedAt;
    const twinHealth = await serverHealth(twin);
    await traffic.stop();

    expect(twinHealth).toMatchObject({ code: 200, status: 'degraded', role: 'standby' });
    const named = /its latest transaction is (\w+) on the (source|destination) chain/.exec(twinHealth.lastError ?? '');
    expect(twinHealth.lastError).toMatch(
      /^another instance has been signing with this authority's key for \d+ s, longer than BRIDGE_HANDOFF_SECS \(10 s\)/,
    );
    expect(landedSignatures(a)).toContain(named?.[1]);
    expect(await metric(twin, 'bridge_crank_other_signer_active_seconds')).toBeGreaterThan(handoffSecs);
    expect(await metric(twin, 'bridge_crank_handoff_seconds')).toBe(handoffSecs);
    expect(await metric(twin, 'bridge_crank_role{role="standby"}')).toBe(1);
    expect(await serverHealth(a)).toMatchObject({ status: 'ok', role: 'active' });
    expect(landedSignatures(twin)).toEqual([]);
    console.info(`twin: degraded ${degradedAfterMs} ms after it started (BRIDGE_HANDOFF_SECS ${handoffSecs})`);
  }, 120_000);
});
