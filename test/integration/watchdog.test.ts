import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acknowledgeBreach } from '../../src/ops/acknowledge.js';
import { depositTracker, nextIndexOf, withdrawTracker } from './support/chain-state.js';
import { startBridgeCrank, type BridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { deposit, rawAckDeposit } from './support/transactions.js';
import { metricValue } from '../support/metric-value.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The watchdog over a devnet bridge (issue 50), with the crank's own poll timer: two colluding
 * authorities finalize a Confirmed entry ten times its deposit; the honest third's crank logs
 * one error line naming the entry within one poll interval, counts it, and with
 * BRIDGE_ON_INVARIANT_BREACH=halt votes nothing further until the breach is acknowledged.
 */

const POLL_MS = 1_000;
const HONEST = 2;

let bridge: DevnetBridge | undefined;
afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

function errorLines(crank: BridgeCrank): Array<Record<string, unknown>> {
  return crank.logs.records().filter((record) => record['level'] === 'error');
}

async function colludingFinalization(b: DevnetBridge, amount: bigint): Promise<number> {
  const mint = b.world.tokenPairs.normal.sourceMint;
  await deposit(b, { amount, sourceMint: mint });
  const index = depositTracker(b).entries.length - 1;
  const { recipient } = depositTracker(b).entries[index]!;
  const forged = { index: BigInt(index), approve: true, amount: amount * 10n, recipient, sourceMint: mint };
  await rawAckDeposit(b, 0, forged);
  await rawAckDeposit(b, 1, forged);
  expect(withdrawTracker(b).entries[index]).toMatchObject({ status: 'Finalized', result: { kind: 'Confirmed', amount: amount * 10n } });
  return index;
}

describe('the watchdog', () => {
  it('pages a mismatched finalization within one poll, names the entry once, and with halt votes nothing until acknowledged', async () => {
    bridge = await startDevnetBridge();
    const index = await colludingFinalization(bridge, 800n);
    const file = join(mkdtempSync(join(tmpdir(), 'watchdog-')), 'breaches.jsonl');
    const started = Date.now();
    const crank = startBridgeCrank(bridge, HONEST, { pollIntervalMs: POLL_MS, config: { watchdog: { onInvariantBreach: 'halt', watchdogFile: file, programHashes: {} } } });

    await waitFor(async () => (await metricValue(crank.metrics.invariantBreaches, { invariant: 'finalized_mismatch' })) === 1, { timeoutMs: POLL_MS, what: 'the breach counted within one poll interval' });
    expect(Date.now() - started).toBeLessThanOrEqual(POLL_MS);
    const [line, ...others] = errorLines(crank);
    expect(others).toEqual([]);
    expect(line).toMatchObject({ breach: `finalized_mismatch:target:${index}:g${withdrawTracker(bridge).header.generation}`, entry: index, chain: 'target' });
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
    await waitFor(() => withdrawTracker(bridge!).header.entryCount === BigInt(index + 2), { timeoutMs: 3 * POLL_MS, what: 'the next entry proposed once acknowledged' });
    expect(await metricValue(crank.metrics.watchdogHalted)).toBe(0);
    // Acknowledged is not raised again: still one error line, one count.
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    expect(errorLines(crank)).toHaveLength(1);
    expect(await metricValue(crank.metrics.invariantBreaches, { invariant: 'finalized_mismatch' })).toBe(1);
  });
});
