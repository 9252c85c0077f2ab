import { expect, type TestContext } from 'vitest';
import { quietWindowMs } from '../../../src/machines/role.js';
import { sleep } from '../../../src/time.js';
import type { LogRecord } from '../../support/server-process.js';
import { waitFor } from '../../support/wait-for.js';
import { authorityBalances, depositTracker, nextIndexOf, withdrawTracker } from './chain-state.js';
import { scrapedSample, serverHealth, startAuthorityServer, type AuthorityServer, type ServerHealth } from './authority-server.js';
import { startBridgeCranks } from './cranks.js';
import { startDevnetBridge, type DevnetBridge } from './devnet-bridge.js';
import { expectSettled } from './expectations.js';
import { claimAll, deposit } from './transactions.js';

/**
 * Handing the authority over between two real servers (`node dist/index.js`) with one key,
 * on their own 1 s poll timers, production timing (docs/crank.md, "Role"): what
 * test/integration/handoff-rollout.test.ts and handoff-takeover.test.ts share. Authorities 1
 * and 2 are in-process cranks on their own timers. Each scenario runs on its own devnet, side
 * by side with the others (two per file, the two files at once): they wait out quiet windows,
 * not the CPU. The instance a scenario hands over from is already active when it begins: it
 * took the free signing lease at its first cycle.
 */

const POLL_SECS = 1;
export const WINDOW_MS = quietWindowMs(POLL_SECS * 1000);
/** After the other signer's last transaction: the window, then at most one poll interval and one cycle until the read that sees it. */
export const TAKEOVER_BOUND_MS = WINDOW_MS + 10_000;
const SETTLE_TIMEOUT_MS = 60_000;
/** The test's pauses run to their end: nothing cancels them. */
export const UNCANCELLED = new AbortController().signal;

/** A devnet bridge whose authorities 1 and 2 crank in-process on 1 s timers, closed when the test finishes. */
export async function startBridge(onTestFinished: TestContext['onTestFinished']): Promise<DevnetBridge> {
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

export function startServer(b: DevnetBridge, env: Record<string, string> = {}): Promise<AuthorityServer> {
  return inTurn(() => startAuthorityServer(b, handoffEnv(env)));
}

export function startTwoAtOnce(b: DevnetBridge): Promise<[AuthorityServer, AuthorityServer]> {
  return inTurn(() => Promise.all([startAuthorityServer(b, handoffEnv()), startAuthorityServer(b, handoffEnv())]));
}

export async function metric(server: AuthorityServer, series: string): Promise<number> {
  return (await scrapedSample(server, series)) ?? 0;
}

export async function waitForRole(server: AuthorityServer, role: string, timeoutMs: number): Promise<void> {
  await waitFor(async () => (await serverHealth(server)).role === role, { timeoutMs, intervalMs: 200, what: `the server's role ${role}` });
}

export const errorLines = (server: AuthorityServer): LogRecord[] =>
  server.process.logs().filter((record) => record['level'] === 'error' || record['level'] === 'fatal');
export const failedAttempts = (server: AuthorityServer): LogRecord[] => server.process.logs().filter((record) => record['outcome'] === 'failed');
/** The signing lease's transactions the server logged as landed: its takings and its release (the advance binding it, then the withdrawal). */
export const leaseTransactions = (server: AuthorityServer): string[] =>
  server.process
    .logs()
    .filter((record) => record['msg'] === 'crank: took the signing lease' || String(record['msg']).startsWith('crank: released the signing lease'))
    .flatMap((record) => [record['advance'], record['signature']].filter((signature): signature is string => typeof signature === 'string'));
export const takeOvers = (server: AuthorityServer): LogRecord[] =>
  server.process.logs().filter((record) => String(record['msg']).startsWith('crank: taking over'));

/**
 * Deposits every `everyMs` and claims what is claimable, until stopped; returns how many
 * deposits it made. The user's own transactions, as real traffic would.
 */
export function steadyTraffic(b: DevnetBridge, everyMs: number): { stop(): Promise<number> } {
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
export async function settleAll(b: DevnetBridge, count: number): Promise<void> {
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
export function watchHealth(server: AuthorityServer): { stop(): Promise<ServerHealth[]> } {
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
export async function bridgeWithActiveServer(onTestFinished: TestContext['onTestFinished']) {
  const b = await startBridge(onTestFinished);
  const startBalances = authorityBalances(b, 0);
  const a = await startServer(b);
  // The signing lease is free on a new bridge: the first instance takes it at its first cycle.
  await waitForRole(a, 'active', 10_000);
  expect(await serverHealth(a)).toMatchObject({ code: 200, status: 'ok', role: 'active' });
  return { b, a, startBalances };
}
