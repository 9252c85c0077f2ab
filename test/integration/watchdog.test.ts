import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acknowledgeBreach, releaseFlow } from '../../src/ops/acknowledge.js';
import { depositTracker, nextIndexOf, withdrawTracker } from './support/chain-state.js';
import { banksCaughtUp, startBridgeCrank, type BridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { deposit, rawAckDeposit } from './support/transactions.js';
import { colludingFinalization, devnetCall, lyingAbout } from './support/watchdog-rehearsal.js';
import { metricValue } from '../support/metric-value.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The watchdog over a devnet bridge (issue 50), with the crank's own poll timer: two colluding
 * authorities finalize a Confirmed entry ten times its deposit; the honest third's crank logs
 * one error line naming the entry within one poll interval, counts it, and with
 * BRIDGE_ON_INVARIANT_BREACH=halt votes nothing further until the breach is acknowledged.
 */

// The setting: the honest third authority's server polls every 2 s.
const POLL_MS = 2_000;
/** The slots the re-check's bound is counted in (a bound in wall time: production-like, not the suite's faster default). */
const SLOT_MS = 50;
/** The re-check reads at finalized at or past the confirmed view's slot: (32 - 2) slots of 50 ms, and 500 ms of reads. */
const RECHECK_MS = 30 * SLOT_MS + 500;
const HONEST = 2;

let bridge: DevnetBridge | undefined;
afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

function errorLines(crank: BridgeCrank): Array<Record<string, unknown>> {
  return crank.logs.records().filter((record) => record['level'] === 'error');
}

describe('the watchdog', () => {
  it('pages a mismatched finalization within one poll, names the entry once, and with halt votes nothing until acknowledged', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    const index = await colludingFinalization(bridge, 800n, [0, 1]);
    // A breach is judged at finalized: the poll's clock starts once the finalized banks hold it.
    await banksCaughtUp(bridge);
    const file = join(mkdtempSync(join(tmpdir(), 'watchdog-')), 'breaches.jsonl');
    const started = Date.now();
    const crank = startBridgeCrank(bridge, HONEST, {
      pollIntervalMs: POLL_MS,
      config: { watchdog: { onInvariantBreach: 'halt', watchdogFile: file, programHashes: {}, flowLimits: [] } },
    });

    await waitFor(async () => (await metricValue(crank.metrics.invariantBreaches, { invariant: 'finalized_mismatch' })) === 1, {
      timeoutMs: POLL_MS + RECHECK_MS,
      what: 'the breach counted within one poll interval and the finalized re-check',
    });
    expect(Date.now() - started).toBeLessThanOrEqual(POLL_MS + RECHECK_MS);
    const [line, ...others] = errorLines(crank);
    expect(others).toEqual([]);
    expect(line).toMatchObject({
      breach: `finalized_mismatch:target:${index}:g${withdrawTracker(bridge).header.generation}`,
      entry: index,
      chain: 'target',
    });
    expect(String(line!['msg'])).toContain(`destination entry ${index}`);
    expect(String(line!['bridge'])).toContain('amount 8000');
    expect(String(line!['expected'])).toContain('amount 800,');

    // Halted: a new deposit gets no vote from this authority over several polls. (The cycle
    // that raised the candidate may still cast its late no on the entry itself: the halt rests
    // on the finalized re-check, which ends after that cycle planned.)
    await deposit(bridge, { amount: 5n, sourceMint: bridge.world.tokenPairs.normal.sourceMint });
    await new Promise((resolve) => setTimeout(resolve, 3 * POLL_MS));
    expect(nextIndexOf(withdrawTracker(bridge), bridge, HONEST)).toBeLessThanOrEqual(index + 1);
    expect(withdrawTracker(bridge).header.entryCount).toBe(BigInt(index + 1));
    expect(await metricValue(crank.metrics.watchdogHalted)).toBe(1);

    const id = String(line!['breach']);
    expect(acknowledgeBreach(file, id, 'test')).toMatchObject({ acknowledged: { id }, stillHalting: [] });
    await waitFor(() => withdrawTracker(bridge!).header.entryCount === BigInt(index + 2), {
      timeoutMs: 3 * POLL_MS,
      what: 'the next entry proposed once acknowledged',
    });
    expect(await metricValue(crank.metrics.watchdogHalted)).toBe(0);
    // Acknowledged is not raised again: still one error line, one count.
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    expect(errorLines(crank)).toHaveLength(1);
    expect(await metricValue(crank.metrics.invariantBreaches, { invariant: 'finalized_mismatch' })).toBe(1);
  });

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

  it('pages a rewound tracker within one poll', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    const mint = bridge.world.tokenPairs.normal.sourceMint;
    const crank = startBridgeCrank(bridge, HONEST, { pollIntervalMs: POLL_MS });
    const helpers = startBridgeCrank(bridge, 0, { pollIntervalMs: POLL_MS });
    for (const amount of [10n, 20n]) await deposit(bridge, { amount, sourceMint: mint });
    await waitFor(() => withdrawTracker(bridge!).header.settledPrefix === 2n, { timeoutMs: 10_000, what: 'both entries finalized' });
    await banksCaughtUp(bridge);
    await crank.service.runOnce();
    await helpers.service.stop(2_000);
    await devnetCall(bridge.pair.target.url, 'devnet_rewindTracker', [bridge.withdrawTracker.toBase58(), { settledPrefix: 0, entryCount: 0 }]);
    // Judged at finalized, as every breach: the poll's clock starts once the finalized banks hold the rewind.
    await banksCaughtUp(bridge);
    const at = Date.now();
    await waitFor(async () => (await metricValue(crank.metrics.invariantBreaches, { invariant: 'tracker_rewound' })) === 1, {
      timeoutMs: 2 * POLL_MS,
      what: 'the rewind paged',
    });
    expect(Date.now() - at).toBeLessThanOrEqual(POLL_MS + 500);
    const lines = errorLines(crank);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ invariant: 'tracker_rewound', chain: 'target' });
    expect(String(lines[0]!['bridge'])).toContain('settled_prefix 0 < 2');
  });

  it('raises no breach from one lying endpoint when the other answers honestly: a doubt, no error line', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    const mint = bridge.world.tokenPairs.normal.sourceMint;
    await deposit(bridge, { amount: 800n, sourceMint: mint });
    const { recipient } = depositTracker(bridge).entries[0]!;
    const honestVote = { index: 0n, approve: true, amount: 800n, recipient, sourceMint: mint };
    await rawAckDeposit(bridge, 0, honestVote);
    await rawAckDeposit(bridge, 1, honestVote);
    const second = await bridge.pair.target.addEndpoint();
    const liar = new URL(bridge.pair.target.url).origin;
    const crank = startBridgeCrank(bridge, HONEST, {
      pollIntervalMs: POLL_MS,
      targetRpcUrls: [bridge.pair.target.url, second.url],
      fetch: lyingAbout(liar, bridge.withdrawTracker.toBase58(), 0, 8_000n),
    });
    await waitFor(async () => (await metricValue(crank.metrics.invariantDoubts, { invariant: 'finalized_mismatch' })) >= 1, {
      timeoutMs: 3 * POLL_MS,
      what: 'the lie refuted',
    });
    await new Promise((resolve) => setTimeout(resolve, 2 * POLL_MS));
    for (const invariant of ['finalized_mismatch', 'finalized_against_own_no'] as const)
      expect(await metricValue(crank.metrics.invariantBreaches, { invariant })).toBe(0);
    expect(errorLines(crank)).toEqual([]);
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
