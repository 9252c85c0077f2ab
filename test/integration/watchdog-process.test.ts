import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ops } from '../ops/ops-cli.js';
import { ensureBuilt } from '../support/server-process.js';
import { waitFor } from '../support/wait-for.js';
import { scrapedSample, startAuthorityServer } from './support/authority-server.js';
import { withdrawTracker } from './support/chain-state.js';
import { banksCaughtUp } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { deposit } from './support/transactions.js';
import { colludingFinalization } from './support/watchdog-rehearsal.js';
import { serverEnv } from '../../devnet/server-env.js';

/**
 * Issue 50's acceptance with real processes: the built server of the honest third authority
 * (authority 0, polling every 2 s, BRIDGE_ON_INVARIANT_BREACH=halt) over a devnet where the other
 * two finalized a Confirmed entry ten times its deposit. Its stdout holds one error line naming
 * the entry within one poll of its first cycle, /metrics counts it, it votes nothing further,
 * and the built `npm run ops -- acknowledge` lets it vote again.
 */

const POLL_SECS = 2;
/** The slots the re-check's bound is counted in (a bound in wall time: production-like, not the suite's faster default). */
const SLOT_MS = 50;
const RECHECK_MS = 30 * SLOT_MS + 500;

let bridge: DevnetBridge | undefined;
beforeAll(ensureBuilt, 180_000);
afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

describe('the watchdog in the built server', () => {
  it('logs one error line naming the mismatched entry within one poll, counts it, halts until acknowledged with npm run ops', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    const index = await colludingFinalization(bridge, 800n, [1, 2]);
    await banksCaughtUp(bridge);
    const file = join(mkdtempSync(join(tmpdir(), 'watchdog-process-')), 'breaches.jsonl');
    const env = {
      BRIDGE_POLL_INTERVAL_SECS: String(POLL_SECS),
      BRIDGE_HANDOFF_SECS: '0',
      BRIDGE_ON_INVARIANT_BREACH: 'halt',
      BRIDGE_WATCHDOG_FILE: file,
    };
    const server = await startAuthorityServer(bridge, env);

    const started = await server.process.waitForLog((record) => record['msg'] === 'crank started');
    const line = await server.process.waitForLog((record) => record['level'] === 'error' && record['component'] === 'watchdog', 3 * POLL_SECS * 1000);
    const afterMs = Date.parse(String(line['time'])) - Date.parse(String(started['time']));
    console.info(`watchdog: the breach paged ${afterMs} ms after the crank started (poll ${POLL_SECS} s)`);
    // Within one poll, and the finalized re-check at or past the confirmed view's slot ((32 - 2) slots of 50 ms, 500 ms of reads).
    expect(afterMs).toBeLessThanOrEqual(POLL_SECS * 1000 + RECHECK_MS);
    expect(line).toMatchObject({ invariant: 'finalized_mismatch', chain: 'target', entry: index, onInvariantBreach: 'halt' });
    expect(await scrapedSample(server, 'bridge_invariant_breaches_total{invariant="finalized_mismatch"}')).toBe(1);
    expect(await scrapedSample(server, 'bridge_watchdog_halted')).toBe(1);

    await deposit(bridge, { amount: 5n, sourceMint: bridge.world.tokenPairs.normal.sourceMint });
    await new Promise((resolve) => setTimeout(resolve, 3 * POLL_SECS * 1000));
    expect(withdrawTracker(bridge).header.entryCount).toBe(BigInt(index + 1));

    const acknowledged = await ops(['acknowledge', String(line['breach'])], { ...serverEnv(bridge.world, 0, 0), ...env });
    expect(acknowledged.code, acknowledged.stderr).toBe(0);
    await waitFor(() => withdrawTracker(bridge!).header.entryCount === BigInt(index + 2), {
      timeoutMs: 3 * POLL_SECS * 1000,
      what: 'the next entry proposed once acknowledged',
    });
    expect(server.process.logs().filter((record) => record['level'] === 'error')).toHaveLength(1);
  });
});
