import { beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '../../src/time.js';
import { ensureBuilt } from '../support/server-process.js';
import { waitFor } from '../support/wait-for.js';
import { landedSignatures, serverHealth } from './support/authority-server.js';
import { authorityBalances, landedStatus, landedTransactionsPaidBy } from './support/chain-state.js';
import {
  bridgeWithActiveServer,
  failedAttempts,
  metric,
  settleAll,
  startBridge,
  startServer,
  startTwoAtOnce,
  steadyTraffic,
  TAKEOVER_BOUND_MS,
  takeOvers,
  UNCANCELLED,
  waitForRole,
  WINDOW_MS,
} from './support/handoff.js';

/** How long a landing may take to reach a server's log after its fee is charged: a status poll and an action's last batch. */
const LOGS_CATCH_UP_MS = 10_000;

/**
 * Handing the authority over between two real servers with one key at production timing
 * (test/integration/support/handoff.ts): kill -9 of the active one of a pair, and two started at
 * the same instant on an idle bridge (the quiet window every start waits out). The two scenarios
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
    await sleep(2_000, UNCANCELLED);
    const count = await traffic.stop();
    await settleAll(b, count);

    expect(await serverHealth(standby)).toMatchObject({ role: 'active' });
    expect(landedSignatures(standby).length).toBeGreaterThan(0);
    console.info(`hot standby: took over ${tookOverMs} ms after kill -9 (window ${WINDOW_MS} ms), ${count} transfers`);
  }, 180_000);

  it('two started at the same instant on an idle bridge never land a vote twice', async ({ onTestFinished }) => {
    const b = await startBridge(onTestFinished);
    const startBalances = authorityBalances(b, 0);
    const [first, second] = await startTwoAtOnce(b);
    // Every start stands by: on an idle bridge nothing but the quiet window says no other instance is about to sign.
    for (const server of [first, second]) expect(await serverHealth(server)).toMatchObject({ code: 200, status: 'ok', role: 'standby' });
    await Promise.all([waitForRole(first, 'active', TAKEOVER_BOUND_MS), waitForRole(second, 'active', TAKEOVER_BOUND_MS)]);

    const traffic = steadyTraffic(b, 500);
    await sleep(5_000, UNCANCELLED);
    const count = await traffic.stop();
    await settleAll(b, count);

    const roles = (await Promise.all([serverHealth(first), serverHealth(second)])).map((h) => h.role);
    // The ledger: every transaction the key paid for is one a server logged as landed, without an
    // error (a repeated vote is refused by the program, so it could only land as a failure). Both
    // may log the same signature: Ed25519 is deterministic, so two instances that sign the same
    // votes over the same blockhash make one transaction, which lands once.
    // A server logs an action's landing once its status poll has seen every transaction of it,
    // a moment after the chain charged the fee (the settle above can be the very transaction):
    // wait for the logs to catch up with what was paid, bounded. A transaction that landed with
    // an error is never logged as landed, so it keeps the counts apart and fails the test.
    const loggedSignatures = () => [...new Set([...landedSignatures(first), ...landedSignatures(second)])];
    await waitFor(() => landedTransactionsPaidBy(b, 0, startBalances) === loggedSignatures().length, { timeoutMs: LOGS_CATCH_UP_MS, intervalMs: 100, what: 'every transaction the key paid for logged as landed' }).catch(
      (error: unknown) => {
        const failed = [...failedAttempts(first), ...failedAttempts(second)].map((record) => record['error']);
        throw new Error(`${String(error)}: ${landedTransactionsPaidBy(b, 0, startBalances)} paid, ${loggedSignatures().length} logged as landed; failed attempts: ${JSON.stringify(failed)}`);
      },
    );
    for (const server of [first, second]) expect(new Set(landedSignatures(server)).size, 'a server logged one landing twice').toBe(landedSignatures(server).length);
    const logged = [...landedSignatures(first), ...landedSignatures(second)];
    const signatures = loggedSignatures();
    expect(signatures.map((signature) => landedStatus(b, signature)?.err)).toEqual(signatures.map(() => null));
    expect(landedTransactionsPaidBy(b, 0, startBalances)).toBe(signatures.length);
    const foreign = (await metric(first, 'bridge_foreign_signatures_total{chain="target"}')) + (await metric(second, 'bridge_foreign_signatures_total{chain="target"}'));
    const refused = [...failedAttempts(first), ...failedAttempts(second)].length;
    console.info(`same instant: ${count} transfers, ${signatures.length} transactions of the key (${logged.length - signatures.length} signed identically by both), ${foreign} counted as foreign on the destination chain, ${refused} failed attempts, roles at the end ${roles.join('/')}`);
  }, 180_000);
});
