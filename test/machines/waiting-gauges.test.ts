import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { CrankEmitted } from '../../src/machines/crank-types.js';
import { createLatencyTelemetry } from '../../src/machines/latency-telemetry.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { metricValue } from '../support/metric-value.js';
import { NOT_WAITING } from './support/bridge-view.js';

// Issue 33, item 2: the oldest entry's age was written only when a cycle completed its reads,
// so while every send failed (or every read did) it froze: 0.52 s, and 0.52 s five seconds later.

/** A read at `atMs` (monotonic), 25 source slots (400 ms) per 10 s; ack_deposit's oldest entry `ageSlots` old. */
function read(atMs: number, ageSlots: number | null): Extract<CrankEmitted, { type: 'planned' }> {
  const slot = 1000 + (atMs / 10_000) * 25;
  return {
    type: 'planned',
    pending: { ack_deposit: ageSlots === null ? 0 : 1, ack_withdraw: 0, cleanup_deposit: 0 },
    readAtMs: atMs,
    waiting: {
      ...NOT_WAITING,
      slots: { source: slot, target: slot },
      oldest: { ...NOT_WAITING.oldest, ack_deposit: ageSlots === null ? null : { index: 0, ageSlots } },
    },
  };
}

describe('the oldest entry waiting, when scraped', () => {
  it('grows with the monotonic clock after the latest read: no read comes while the node is down or an action retries', async () => {
    const metrics = createMetrics(new Registry());
    let now = 0;
    const latency = createLatencyTelemetry(metrics, () => now);
    latency.record(read(0, 10), 0);
    now = 10_000;
    latency.record(read(10_000, 35), now);
    const seconds = () => metricValue(metrics.oldestPendingAgeSeconds, { action: 'ack_deposit' });
    // 35 slots of 400 ms.
    expect(await seconds()).toBeCloseTo(14);
    now += 5_000;
    expect(await seconds()).toBeCloseTo(19);
    now += 600_000;
    expect(await seconds()).toBeCloseTo(619);
    // Slots stay what the latest read said: the chain's own clock, not extrapolated.
    expect(await metricValue(metrics.oldestPendingAgeSlots, { action: 'ack_deposit' })).toBe(35);
  });

  it('reads 0 from a read where nothing waits, however long ago', async () => {
    const metrics = createMetrics(new Registry());
    let now = 0;
    const latency = createLatencyTelemetry(metrics, () => now);
    latency.record(read(0, 10), 0);
    latency.record(read(10_000, null), 10_000);
    now = 3_600_000;
    expect(await metricValue(metrics.oldestPendingAgeSeconds, { action: 'ack_deposit' })).toBe(0);
  });
});
