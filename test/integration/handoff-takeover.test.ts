import { beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '../../src/time.js';
import { ensureBuilt } from '../support/server-process.js';
import { waitFor } from '../support/wait-for.js';
import { landedSignatures, serverHealth } from './support/authority-server.js';
import { authorityBalances, landedStatus, landedTransactionsPaidBy } from './support/chain-state.js';
import {
  bridgeWithActiveServer,
  errorLines,
  leaseTransactions,
  metric,
  settleAll,
  startBridge,
  startServer,
  startTwoAtOnce,
  steadyTraffic,
  TAKEOVER_BOUND_MS,
  takeOvers,
  UNCANCELLED,
  WINDOW_MS,
} from './support/handoff.js';

/** How long a landing may take to reach a server's log after its fee is charged: a status poll and an action's last batch. */
const LOGS_CATCH_UP_MS = 10_000;

/**
 * Handing the authority over between two real servers with one key at production timing
 * (test/integration/support/handoff.ts): kill -9 of the active one of a pair (the quiet window
 * still holds), and two started at the same instant racing for the free signing lease. The two scenarios
 * run side by side; handoff-rollout.test.ts holds the other two.
 */

beforeAll(() => {
  ensureBuilt();
}, 120_000);

describe.concurrent('handoff between two instances of one signer: kill -9 and the same instant', () => {
  it('hot standby: kill -9 of the active one, and the standby takes over and completes every transfer', async ({ onTestFinished }) => {
    const { b, a } = await bridgeWithActiveServer(onTestFinished);
    const traffic = steadyTraffic(b, 500);
    const standby = await startServer(b, { BRIDGE_HANDOFF_SECS: '86400' });
    await sleep(5_000, UNCANCELLED);
    expect(await serverHealth(standby)).toMatchObject({ status: 'ok', role: 'standby' });

    const killedAt = Date.now();
    a.process.child.kill('SIGKILL');
    await a.process.exited;
    await waitFor(() => takeOvers(standby).length > 0, { timeoutMs: TAKEOVER_BOUND_MS, intervalMs: 100, what: 'the standby taking over' });
    const tookOverMs = Date.now() - killedAt;
    // A crash releases nothing: the standby waited the quiet window (from A's last transaction, at most a poll and a cycle before the kill) and took the lease over.
    expect(tookOverMs).toBeGreaterThanOrEqual(WINDOW_MS - 3_000);
    expect(takeOvers(standby)[0]).toMatchObject({ lease: 'taken_over' });
    await sleep(2_000, UNCANCELLED);
    const count = await traffic.stop();
    await settleAll(b, count);

    expect(await serverHealth(standby)).toMatchObject({ role: 'active' });
    expect(landedSignatures(standby).length).toBeGreaterThan(0);
    console.info(`hot standby: took over ${tookOverMs} ms after kill -9 (window ${WINDOW_MS} ms), ${count} transfers`);
  }, 180_000);

  it('two started at the same instant race for the free signing lease: exactly one takes it and signs, the other stands by without an error', async ({
    onTestFinished,
  }) => {
    const b = await startBridge(onTestFinished);
    const startBalances = authorityBalances(b, 0);
    const [first, second] = await startTwoAtOnce(b);
    const traffic = steadyTraffic(b, 500);
    await sleep(6_000, UNCANCELLED);
    const count = await traffic.stop();
    await settleAll(b, count);

    const healths = await Promise.all([serverHealth(first), serverHealth(second)]);
    expect(healths.map((h) => h.role).sort()).toEqual(['active', 'standby']);
    const [winner, loser] = healths[0]!.role === 'active' ? [first, second] : [second, first];
    expect(landedSignatures(winner).length).toBeGreaterThan(0);
    expect(landedSignatures(loser)).toEqual([]);
    expect(takeOvers(loser)).toEqual([]);
    for (const server of [first, second]) {
      expect(errorLines(server)).toEqual([]);
      expect(await metric(server, 'bridge_foreign_signatures_total{chain="target"}')).toBe(0);
      expect(await metric(server, 'bridge_foreign_signatures_total{chain="source"}')).toBe(0);
    }
    // The ledger: the winner's votes and its taking, and the loser's taking if it landed (refused, with its fee) rather than being refused in preflight.
    const signatures = landedSignatures(winner);
    expect(new Set(signatures).size).toBe(signatures.length);
    expect(signatures.map((signature) => landedStatus(b, signature)?.err)).toEqual(signatures.map(() => null));
    const refusedTakings = loser.process.logs().filter((record) => String(record['why']).includes('landed with')).length;
    await waitFor(() => landedTransactionsPaidBy(b, 0, startBalances) === signatures.length + leaseTransactions(winner).length + refusedTakings, {
      timeoutMs: LOGS_CATCH_UP_MS,
      intervalMs: 100,
      what: 'every transaction the key paid for logged: votes, the lease taken, a refused taking',
    });
    expect(leaseTransactions(winner)).toHaveLength(1);
    console.info(
      `same instant: ${count} transfers, ${signatures.length} votes by one instance, the other's taking ${refusedTakings === 1 ? 'landed refused' : 'refused in preflight'}`,
    );
  }, 180_000);
});
