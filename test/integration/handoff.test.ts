import { beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { quietWindowMs } from '../../src/machines/role.js';
import { sleep } from '../../src/time.js';
import { ensureBuilt, type LogRecord } from '../support/server-process.js';
import { waitFor } from '../support/wait-for.js';
import { authorityBalances, depositTracker, landedStatus, landedTransactionsPaidBy, nextIndexOf, withdrawTracker } from './support/chain-state.js';
import { landedSignatures, scrapedSample, serverHealth, startAuthorityServer, type AuthorityServer, type ServerHealth } from './support/authority-server.js';
import { startBridgeCranks } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled } from './support/expectations.js';
import { claimAll, deposit } from './support/transactions.js';

/**
 * Handing the authority over between two real servers (`node dist/index.js`) with one key,
 * on their own 1 s poll timers, production timing (docs/crank.md, "Role"): a rolling deploy
 * under steady traffic, a twin that stays, kill -9 of the active one of a pair, and two started
 * at the same instant. Authorities 1 and 2 are in-process cranks on their own timers.
 *
 * The four tests run side by side, each on its own devnet: they wait out quiet windows, not
 * the CPU. The instance a test hands over from is already active when the test begins (it runs
 * with BRIDGE_HANDOFF_SECS=0, as an instance that has long been active behaves): the quiet
 * window every start waits out is the last test's, on an idle bridge.
 */

const POLL_SECS = 1;
const WINDOW_MS = quietWindowMs(POLL_SECS * 1000);
/** After the other signer's last transaction: the window, then at most one poll interval and one cycle until the read that sees it. */
const TAKEOVER_BOUND_MS = WINDOW_MS + 10_000;
const SETTLE_TIMEOUT_MS = 60_000;
/** The test's pauses run to their end: nothing cancels them. */
const UNCANCELLED = new AbortController().signal;
/** The active instance a test hands over from. */
const ALREADY_ACTIVE = { BRIDGE_HANDOFF_SECS: '0' };

beforeAll(() => {
  ensureBuilt();
}, 120_000);

/** A devnet bridge whose authorities 1 and 2 crank in-process on 1 s timers, closed when the test finishes. */
async function startBridge(onTestFinished: TestContext['onTestFinished']): Promise<DevnetBridge> {
  const b = await startDevnetBridge();
  onTestFinished(() => b.close());
  const others = await startBridgeCranks(b, [1, 2], { pollIntervalMs: POLL_SECS * 1000 });
  b.onClose(async () => {
    await Promise.all(others.map((crank) => crank.service.stop(2_000)));
  });
  return b;
}

/**
 * Server starts take turns across the scenarios running side by side: each start loads dist/
 * (about a second of CPU), and the scenarios' starts at once on a loaded 2-core machine ran past
 * ServerProcess's 10 s bound on the startup line. One turn may start several at the same instant.
 */
const inTurn = turns();

function turns(): <T>(start: () => Promise<T>) => Promise<T> {
  let previous: Promise<unknown> = Promise.resolve();
  return (start) => {
    const turn = previous.then(start);
    previous = turn.catch(() => undefined);
    return turn;
  };
}

/** The production default handoff (serverEnv turns it off for the devnet's one server per authority), then `env`. */
function handoffEnv(env: Record<string, string> = {}): Record<string, string> {
  return { BRIDGE_POLL_INTERVAL_SECS: String(POLL_SECS), BRIDGE_HANDOFF_SECS: '300', ...env };
}

function startServer(b: DevnetBridge, env: Record<string, string> = {}): Promise<AuthorityServer> {
  return inTurn(() => startAuthorityServer(b, handoffEnv(env)));
}

function startTwoAtOnce(b: DevnetBridge): Promise<[AuthorityServer, AuthorityServer]> {
  return inTurn(() => Promise.all([startAuthorityServer(b, handoffEnv()), startAuthorityServer(b, handoffEnv())]));
}

async function metric(server: AuthorityServer, series: string): Promise<number> {
  return (await scrapedSample(server, series)) ?? 0;
}

async function waitForRole(server: AuthorityServer, role: string, timeoutMs: number): Promise<void> {
  await waitFor(async () => (await serverHealth(server)).role === role, { timeoutMs, intervalMs: 200, what: `the server's role ${role}` });
}

const errorLines = (server: AuthorityServer): LogRecord[] => server.process.logs().filter((record) => record['level'] === 'error' || record['level'] === 'fatal');
const failedAttempts = (server: AuthorityServer): LogRecord[] => server.process.logs().filter((record) => record['outcome'] === 'failed');
const takeOvers = (server: AuthorityServer): LogRecord[] => server.process.logs().filter((record) => String(record['msg']).startsWith('crank: taking over'));

/**
 * Deposits every `everyMs` and claims what is claimable, until stopped; returns how many
 * deposits it made. The user's own transactions, as real traffic would.
 */
function steadyTraffic(b: DevnetBridge, everyMs: number): { stop(): Promise<number> } {
  let running = true;
  let count = 0;
  const loop = (async () => {
    while (running) {
      await deposit(b, { amount: 100n + BigInt(count), sourceMint: b.world.tokenPairs.normal.sourceMint });
      count += 1;
      await claimAll(b);
      await sleep(everyMs, UNCANCELLED);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return count;
    },
  };
}

/**
 * Waits until every transfer is cleaned up and every authority's positions moved past it. An
 * authority whose vote the threshold no longer needed moves its position at its next cycle,
 * which may come after the cleanup: waiting for the cleanup alone failed on a loaded machine.
 */
async function settleAll(b: DevnetBridge, count: number): Promise<void> {
  await waitFor(
    async () => {
      await claimAll(b);
      const deposits = depositTracker(b);
      const withdrawals = withdrawTracker(b);
      const positionsPast = [0, 1, 2].every((k) => nextIndexOf(deposits, b, k) === count && nextIndexOf(withdrawals, b, k) === count);
      return deposits.header.entryCount === BigInt(count) && deposits.header.settledPrefix === BigInt(count) && positionsPast;
    },
    { timeoutMs: SETTLE_TIMEOUT_MS, intervalMs: 200, what: `all ${count} transfers settled and every authority's positions past them` },
  );
  expectSettled(b, count);
}

/** Polls /health every 250 ms until stopped, keeping every answer. */
function watchHealth(server: AuthorityServer): { stop(): Promise<ServerHealth[]> } {
  const seen: ServerHealth[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      seen.push(await serverHealth(server));
      await sleep(250, UNCANCELLED);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return seen;
    },
  };
}

/** A bridge with server A for authority 0, active from its start. */
async function bridgeWithActiveServer(onTestFinished: TestContext['onTestFinished']) {
  const b = await startBridge(onTestFinished);
  const startBalances = authorityBalances(b, 0);
  const a = await startServer(b, ALREADY_ACTIVE);
  expect(await serverHealth(a)).toMatchObject({ code: 200, status: 'ok', role: 'active' });
  return { b, a, startBalances };
}

describe.concurrent('handoff between two instances of one signer', () => {
  it('rolling deploy under steady traffic: B stands by during the overlap, takes over after SIGTERM to A; no error, no foreign signature, no repeated vote', async ({ onTestFinished }) => {
    const { b, a, startBalances } = await bridgeWithActiveServer(onTestFinished);
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
    expect(landedTransactionsPaidBy(b, 0, startBalances)).toBe(signatures.length);
    console.info(`rollout: ${count} transfers, B took over ${tookOverMs} ms after SIGTERM to A (window ${WINDOW_MS} ms)`);
  }, 180_000);

  it('a twin that stays past BRIDGE_HANDOFF_SECS makes the standby one degraded, naming the other signer\'s latest transaction', async ({ onTestFinished }) => {
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
    expect(twinHealth.lastError).toMatch(/^another instance has been signing with this authority's key for \d+ s, longer than BRIDGE_HANDOFF_SECS \(10 s\)/);
    expect(landedSignatures(a)).toContain(named?.[1]);
    expect(await metric(twin, 'bridge_crank_other_signer_active_seconds')).toBeGreaterThan(handoffSecs);
    expect(await metric(twin, 'bridge_crank_handoff_seconds')).toBe(handoffSecs);
    expect(await metric(twin, 'bridge_crank_role{role="standby"}')).toBe(1);
    expect(await serverHealth(a)).toMatchObject({ status: 'ok', role: 'active' });
    expect(landedSignatures(twin)).toEqual([]);
    console.info(`twin: degraded ${degradedAfterMs} ms after it started (BRIDGE_HANDOFF_SECS ${handoffSecs})`);
  }, 120_000);

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
    for (const server of [first, second]) expect(new Set(landedSignatures(server)).size, 'a server logged one landing twice').toBe(landedSignatures(server).length);
    const logged = [...landedSignatures(first), ...landedSignatures(second)];
    const signatures = [...new Set(logged)];
    expect(signatures.map((signature) => landedStatus(b, signature)?.err)).toEqual(signatures.map(() => null));
    expect(landedTransactionsPaidBy(b, 0, startBalances)).toBe(signatures.length);
    const foreign = (await metric(first, 'bridge_foreign_signatures_total{chain="target"}')) + (await metric(second, 'bridge_foreign_signatures_total{chain="target"}'));
    const refused = [...failedAttempts(first), ...failedAttempts(second)].length;
    console.info(`same instant: ${count} transfers, ${signatures.length} transactions of the key (${logged.length - signatures.length} signed identically by both), ${foreign} counted as foreign on the destination chain, ${refused} failed attempts, roles at the end ${roles.join('/')}`);
  }, 180_000);
});
