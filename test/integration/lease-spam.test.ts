import { beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_DOUBT_WINDOWS } from '../../src/machines/role.js';
import { ensureBuilt } from '../support/server-process.js';
import { waitFor } from '../support/wait-for.js';
import { serverHealth } from './support/authority-server.js';
import { errorLines, metric, startBridge, startServer, takeOvers, waitForRole, WINDOW_MS } from './support/handoff.js';
import { initNonces } from './support/nonces.js';
import { deposit } from './support/transactions.js';

/**
 * History spam against a standby in nonce mode (issue 41 item 2): A holds the signing lease and
 * is killed (kill -9: a crash releases nothing); B waits the quiet window. Meanwhile anyone can
 * list the authority in the chain's history: 80 airdrops a second to it on the destination chain,
 * more than one read's lookups check, so every read of B leaves the history incomplete and starts
 * its window again. Before issue 41 that held B for as long as the spam lasted; in nonce mode
 * (the nonces stayed quiet) it holds B at most HISTORY_DOUBT_WINDOWS windows after its latest
 * sighting of A, with a warn line and a metric saying why. A deposit right after the kill is the
 * work that makes B take the lease over (it waits the window too, inside the same bound). Real
 * servers on a 1 s poll (W = 13 s).
 */

const SPAM_PER_TICK = 8;
const TICK_MS = 100;
/** B's first read (or its latest sighting of A) plus two windows, then at most a poll interval and a cycle. */
const BOUND_MS = HISTORY_DOUBT_WINDOWS * WINDOW_MS + 5_000;

beforeAll(() => {
  ensureBuilt();
}, 120_000);

describe('a standby under history spam in nonce mode', () => {
  it('takes the lease over within two quiet windows although the history stays incomplete, saying why it waited', async ({ onTestFinished }) => {
    const b = await startBridge(onTestFinished);
    await initNonces(b, [0]);
    const a = await startServer(b);
    await waitForRole(a, 'active', 10_000);
    const spam = setInterval(() => {
      for (let i = 0; i < SPAM_PER_TICK; i++) b.pair.target.airdrop(b.authorities[0]!.publicKey, 1);
    }, TICK_MS);
    onTestFinished(() => clearInterval(spam));
    // At debug, for its idle cycles' lines: the bound counts from its first read.
    const standby = await startServer(b, { BRIDGE_LOG_LEVEL: 'debug' });
    a.process.child.kill('SIGKILL');
    await a.process.exited;
    // Work for B: a held lease is taken over only once work has waited the window (an idle holder keeps it).
    await deposit(b, { amount: 100n, sourceMint: b.world.tokenPairs.normal.sourceMint });

    await waitFor(() => takeOvers(standby).length > 0, { timeoutMs: BOUND_MS + 5_000, intervalMs: 200, what: 'the standby taking the lease over' });
    // From the end of B's first cycle (the first read, from which the window counts, returned within
    // it) to when the server says it took over (its line's time), not when this 200 ms poll noticed it.
    const firstCycle = standby.process.logs().find((record) => record['msg'] === 'crank cycle finished');
    const tookOverMs = Date.parse(String(takeOvers(standby)[0]!['time'])) - Date.parse(String(firstCycle!['time']));
    clearInterval(spam);

    expect(tookOverMs).toBeLessThanOrEqual(BOUND_MS);
    expect(takeOvers(standby)[0]).toMatchObject({ lease: 'taken_over' });
    expect(await metric(standby, 'bridge_crank_standby_window_restarts_total{reason="history_incomplete"}')).toBeGreaterThan(0);
    expect(standby.process.logs().filter((record) => String(record['msg']).startsWith('crank: standing by longer'))).toHaveLength(1);
    expect(await serverHealth(standby)).toMatchObject({ role: 'active' });
    expect(errorLines(standby)).toEqual([]);
    console.info(
      `history spam: the standby took the lease over ${tookOverMs} ms after its first cycle (bound ${BOUND_MS} ms, window ${WINDOW_MS} ms)`,
    );
  }, 60_000);
});
