import { afterEach, describe, expect, it } from 'vitest';
import type { BridgeCrank } from './support/cranks.js';
import { banksCaughtUp, startBridgeCranks } from './support/cranks.js';
import { depositTracker, votersMask, withdrawTracker } from './support/chain-state.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { depositRejected, settleWithin } from './support/settle.js';
import { histogramValue, metricValue } from '../support/metric-value.js';
import { waitFor } from '../support/wait-for.js';

/**
 * What users wait, as the metrics say it, over the devnet: one authority's votes are held back
 * (every send fails) while the chain's slots pass, so the oldest entry's age grows cycle after
 * cycle; once the sends go through, its votes land, the age drops to zero, and every vote that
 * landed on chain is one observation of bridge_vote_latency_seconds.
 */

const SLOT_MS = 50;
const TRANSFERS = 3;

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

async function slotsPass(b: DevnetBridge, count: number): Promise<void> {
  const from = b.pair.source.slot;
  await waitFor(() => b.pair.source.slot >= from + count && b.pair.target.slot >= from + count, {
    timeoutMs: 10_000,
    what: `${count} slots to pass`,
  });
}

const oldest = (crank: BridgeCrank, unit: 'slots' | 'seconds', action: string) =>
  metricValue(unit === 'slots' ? crank.metrics.oldestPendingAgeSlots : crank.metrics.oldestPendingAgeSeconds, { action });

/** Entries whose vote masks hold authority k's bit. */
function votesOnChain(k: number): { ack_deposit: number; ack_withdraw: number } {
  const bit = votersMask(k);
  const voted = (entries: Array<{ yesVotes: number; noVotes: number }>) =>
    entries.filter((entry) => ((entry.yesVotes | entry.noVotes) & bit) !== 0).length;
  return { ack_deposit: voted(withdrawTracker(bridge!).entries), ack_withdraw: voted(depositTracker(bridge!).entries) };
}

describe('waiting and latency metrics', () => {
  it('follow an entry held back: its age grows while the votes fail, drops to zero once they land; one observation per vote landed', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    const cranks = await startBridgeCranks(bridge, [0, 1, 2], { maxAttempts: 1, confirmTimeoutMs: 1_000 });
    const a = cranks[0]!;
    // Rejected results (a frozen pair) need no claim: each transfer runs through every phase on the cranks alone.
    await depositRejected(bridge, TRANSFERS);

    bridge.pair.target.faults.set({ methods: { sendTransaction: { errorRate: 1, errorKind: 'http500' } } });
    const start = { slot: bridge.pair.source.slot, atMs: performance.now() };
    const ages: number[] = [];
    for (let cycle = 0; cycle < 3; cycle++) {
      await slotsPass(bridge, 5);
      await a.service.runOnce();
      ages.push(await oldest(a, 'slots', 'ack_deposit'));
    }
    expect(ages[0]).toBeGreaterThan(0);
    expect(ages[1]).toBeGreaterThan(ages[0]!);
    expect(ages[2]).toBeGreaterThan(ages[1]!);
    const slotSeconds = await metricValue(a.metrics.slotDuration, { chain: 'source' });
    // The test's own measurement of the same chain over the same cycles (timer slots slow down under load).
    const observedSeconds = (performance.now() - start.atMs) / 1000 / (bridge.pair.source.slot - start.slot);
    expect(slotSeconds).toBeGreaterThan(observedSeconds * 0.5);
    expect(slotSeconds).toBeLessThan(observedSeconds * 2);
    // Seconds are the age at the read plus the time since it, when scraped (well under 5 s here).
    const atRead = ages[2]! * slotSeconds;
    expect(await oldest(a, 'seconds', 'ack_deposit')).toBeGreaterThanOrEqual(atRead - 1e-6);
    expect(await oldest(a, 'seconds', 'ack_deposit')).toBeLessThan(atRead + 5);
    expect(await histogramValue(a.metrics.voteLatency, 'count')).toBe(0);

    bridge.pair.target.faults.clear();
    await a.service.runOnce();
    expect(votesOnChain(0).ack_deposit).toBe(TRANSFERS);
    await a.service.runOnce();
    expect(await oldest(a, 'slots', 'ack_deposit')).toBe(0);
    expect(await oldest(a, 'seconds', 'ack_deposit')).toBe(0);

    await settleWithin(bridge, cranks, 6);
    expect(depositTracker(bridge).header.settledPrefix).toBe(BigInt(TRANSFERS));
    // a observes the cleanups finishing at its source read, which is at finalized.
    await banksCaughtUp(bridge);
    await a.service.runOnce();

    for (const [k, crank] of cranks.entries()) {
      const onChain = votesOnChain(k);
      expect(await histogramValue(crank.metrics.voteLatency, 'count', { action: 'ack_deposit' }), `authority ${k}`).toBe(onChain.ack_deposit);
      expect(await histogramValue(crank.metrics.voteLatency, 'count', { action: 'ack_withdraw' }), `authority ${k}`).toBe(onChain.ack_withdraw);
    }
    // a's held-back votes waited at least the slots their entries aged while the sends failed.
    expect(await histogramValue(a.metrics.voteLatency, 'sum', { action: 'ack_deposit' })).toBeGreaterThan(TRANSFERS * ages[2]! * slotSeconds * 0.9);
    expect(await histogramValue(a.metrics.transferLatency, 'count', { stage: 'ack_withdraw' })).toBe(TRANSFERS);
    expect(await histogramValue(a.metrics.transferLatency, 'count', { stage: 'cleanup' })).toBe(TRANSFERS);
    for (const action of ['ack_deposit', 'ack_withdraw', 'cleanup_deposit']) expect(await oldest(a, 'slots', action), action).toBe(0);
  });
});
