import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { releaseFlow } from '../../src/ops/acknowledge.js';
import { nextIndexOf, withdrawTracker } from './support/chain-state.js';
import { errorLines, startBridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { deposit } from './support/transactions.js';
import { devnetCall } from './support/watchdog-rehearsal.js';
import { metricValue } from '../support/metric-value.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The watchdog over a devnet bridge (issue 50), beside its breaches (watchdog.test.ts): a
 * program upgrade noticed within the deployment cadence, signing held while the program does
 * not hash to BRIDGE_<CHAIN>_PROGRAM_HASH, and the flow breaker holding the queue at its limit.
 */

// The setting: the honest third authority's server polls every 2 s.
const POLL_MS = 2_000;
/** The slots the re-check's bound is counted in (a bound in wall time: production-like, not the suite's faster default). */
const SLOT_MS = 50;
const HONEST = 2;

let bridge: DevnetBridge | undefined;
afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

describe('the watchdog: the program it trusts and the flow breaker', () => {
  it('notices a program upgrade within the deployment cadence: a warn line and the counter', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    const cadenceMs = 500;
    const crank = startBridgeCrank(bridge, HONEST, { deploymentIntervalMs: cadenceMs });
    const firstRead = () =>
      crank.logs.records().some((record) => String(record['msg']).startsWith('watchdog: the bridge program on the destination chain'));
    await waitFor(firstRead, { timeoutMs: 5_000, what: 'the first deployment read' });
    const upgraded = await devnetCall(bridge.pair.target.url, 'devnet_upgradeProgram', [{ version: 'v2' }]);
    const at = Date.now();
    await waitFor(async () => (await metricValue(crank.metrics.programChanges, { chain: 'target' })) === 1, {
      timeoutMs: 2 * cadenceMs + 1_000,
      what: 'the upgrade noticed',
    });
    expect(Date.now() - at).toBeLessThanOrEqual(cadenceMs + 1_000);
    expect(await metricValue(crank.metrics.programDeploySlot, { chain: 'target' })).toBe(upgraded['deploySlot']);
    const warned = crank.logs
      .records()
      .filter((record) => record['level'] === 'warn' && String(record['msg']).includes('bridge program on the destination chain changed'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ chain: 'target', hash: upgraded['hash'], deploySlot: String(upgraded['deploySlot']) });
    expect(await metricValue(crank.metrics.programChanges, { chain: 'source' })).toBe(0);
  });

  it('holds signing on a chain whose program does not hash to BRIDGE_<CHAIN>_PROGRAM_HASH, and signs once it does', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    const v1 = await devnetCall(bridge.pair.target.url, 'devnet_upgradeProgram', [{ version: 'v1' }]);
    const crank = startBridgeCrank(bridge, HONEST, {
      pollIntervalMs: POLL_MS,
      deploymentIntervalMs: 300,
      config: { watchdog: { onInvariantBreach: 'continue', watchdogFile: undefined, programHashes: { target: String(v1['hash']) }, flowLimits: [] } },
    });
    await devnetCall(bridge.pair.target.url, 'devnet_upgradeProgram', [{ version: 'v2' }]);
    await waitFor(async () => (await metricValue(crank.metrics.programHashMismatch, { chain: 'target' })) === 1, {
      timeoutMs: 3_000,
      what: 'the mismatch seen',
    });
    await deposit(bridge, { amount: 7n, sourceMint: bridge.world.tokenPairs.normal.sourceMint });
    await new Promise((resolve) => setTimeout(resolve, 2 * POLL_MS));
    expect(withdrawTracker(bridge).header.entryCount).toBe(0n);
    expect(errorLines(crank)).toHaveLength(1);
    await devnetCall(bridge.pair.target.url, 'devnet_upgradeProgram', [{ version: 'v1' }]);
    await waitFor(() => withdrawTracker(bridge!).header.entryCount === 1n, {
      timeoutMs: 3 * POLL_MS,
      what: 'the proposal once the program matches again',
    });
  });

  it('flow breaker: holds the queue at the limit, shows the held transfer, resumes on release; nothing voted twice, nothing skipped', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    const mint = bridge.world.tokenPairs.normal.sourceMint;
    const file = join(mkdtempSync(join(tmpdir(), 'flow-')), 'watchdog.jsonl');
    const flowLimits = [{ mint, amount: 100n, windowMs: 3_600_000 }];
    const crank = startBridgeCrank(bridge, HONEST, {
      config: { watchdog: { onInvariantBreach: 'continue', watchdogFile: file, programHashes: {}, flowLimits } },
    });
    await crank.service.runOnce();
    for (const amount of [60n, 50n, 30n]) await deposit(bridge, { amount, sourceMint: mint });

    await crank.service.runOnce();
    // 60 passes; 50 would carry 110 > 100: held there, and 30 behind it waits (votes are in order).
    expect(withdrawTracker(bridge).header.entryCount).toBe(1n);
    expect(nextIndexOf(withdrawTracker(bridge), bridge, HONEST)).toBe(1);
    const held = crank.service.health().watchdog?.flow_held;
    expect(held).toMatchObject({ id: `flow:1:${mint}:50`, index: 1, amount: '50', carried: '60', limit: '100', window_hours: 1 });
    expect(await metricValue(crank.metrics.flowHeld, { mint })).toBe(1);
    const paged = errorLines(crank);
    expect(paged).toHaveLength(1);
    expect(paged[0]).toMatchObject({ hold: `flow:1:${mint}:50`, entry: 1 });
    await crank.service.runOnce();
    expect(withdrawTracker(bridge).header.entryCount).toBe(1n);
    expect(errorLines(crank)).toHaveLength(1);

    expect(releaseFlow(file, held!.id, 'test')).toEqual({ released: held!.id });
    await crank.service.runOnce();
    // Entry 1 voted once released; 30 more would carry 140: entry 2 is held next, never skipped.
    expect(withdrawTracker(bridge).header.entryCount).toBe(2n);
    expect(withdrawTracker(bridge).entries.map((entry) => entry.amount)).toEqual([60n, 50n]);
    expect(crank.service.health().watchdog?.flow_held).toMatchObject({ id: `flow:2:${mint}:30`, carried: '110' });
    const landed = crank.logs.records().filter((record) => record['action'] === 'ack_deposit' && Array.isArray(record['signatures']));
    expect(landed.flatMap((record) => record['indices'] as number[]).sort()).toEqual([0, 1]);
  });
});
