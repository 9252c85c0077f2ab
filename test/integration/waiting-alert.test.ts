import { afterEach, describe, expect, it } from 'vitest';
import { startBridgeCranks, type BridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { depositRejected } from './support/settle.js';
import { metricValue } from '../support/metric-value.js';
import { sleep } from '../../src/time.js';

/**
 * Issue 33, item 2, over the devnet: `bridge_oldest_pending_age_seconds` read 0.52 and again
 * 0.52 five seconds later while every send failed, so BridgeTransfersWaiting (the age above
 * bridge_transfer_wait_alert_seconds for 5 minutes) could not fire. Now the age grows between
 * scrapes while every send fails and while every read fails, at the pace of the clock.
 */

const PAUSE_MS = 1_500;

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

const age = (crank: BridgeCrank) => metricValue(crank.metrics.oldestPendingAgeSeconds, { action: 'ack_deposit' });

/** The age at two scrapes PAUSE_MS apart, with no cycle in between (the crank is stuck or waits). */
async function growth(crank: BridgeCrank): Promise<number> {
  const before = await age(crank);
  await sleep(PAUSE_MS, AbortSignal.timeout(10_000));
  return (await age(crank)) - before;
}

describe('the waiting-time gauge while the crank cannot act', () => {
  it('grows between scrapes when every send fails and when every read fails', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: 50 });
    const [crank] = await startBridgeCranks(bridge, [0], { maxAttempts: 1, confirmTimeoutMs: 1_000 });
    await depositRejected(bridge, 2);

    bridge.pair.target.faults.set({ methods: { sendTransaction: { errorRate: 1, errorKind: 'http500' } } });
    await crank!.service.runOnce();
    // A cycle read the slot time and the waiting entry: the age is known, then keeps growing.
    expect(await age(crank!)).toBeGreaterThan(0);
    expect(await growth(crank!)).toBeGreaterThanOrEqual((PAUSE_MS - 50) / 1000);

    bridge.pair.source.faults.set({ methods: { '*': { errorRate: 1, errorKind: 'http500' } } });
    const report = await crank!.service.runOnce();
    expect(report.ack_deposit_attempted).toBe(false);
    expect(crank!.service.status()).toBe('degraded');
    expect(await growth(crank!)).toBeGreaterThanOrEqual((PAUSE_MS - 50) / 1000);
  });
});
