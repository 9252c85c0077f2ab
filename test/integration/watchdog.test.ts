import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acknowledgeBreach } from '../../src/ops/acknowledge.js';
import { depositTracker, nextIndexOf, withdrawTracker } from './support/chain-state.js';
import { banksCaughtUp, errorLines, startBridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { deposit, rawAckDeposit } from './support/transactions.js';
import { colludingFinalization, devnetCall, lyingAbout } from './support/watchdog-rehearsal.js';
import { metricValue } from '../support/metric-value.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The watchdog's breaches over a devnet bridge (issue 50), with the crank's own poll timer
 * (watchdog-program.test.ts: the program it trusts and the flow breaker): two colluding
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
    const cyclesAt = await metricValue(crank.metrics.crankCycles);
    await waitFor(async () => (await metricValue(crank.metrics.invariantBreaches, { invariant: 'tracker_rewound' })) === 1, {
      timeoutMs: 2 * POLL_MS,
      what: 'the rewind paged',
    });
    // Within one poll: raised by the cycle in flight or the next one the timer starts, never a
    // later one; in wall time, the documented bound (one poll interval, then the finalized re-check).
    expect((await metricValue(crank.metrics.crankCycles)) - cyclesAt).toBeLessThanOrEqual(2);
    expect(Date.now() - at).toBeLessThanOrEqual(POLL_MS + RECHECK_MS);
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
});
