import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/metrics.js';
import type { CrankEmitted } from '../../src/machines/crank-types.js';
import { createLatencyTelemetry } from '../../src/machines/latency-telemetry.js';
import type { WaitingRead } from '../../src/machines/planning/waiting.js';
import { histogramValue, metricValue } from '../support/metric-value.js';
import { NOT_WAITING } from './support/bridge-view.js';

/** Reads every 10 s of monotonic time, 25 source slots (400 ms) and 50 destination slots (200 ms) apart. */
function read(n: number, overrides: Partial<WaitingRead> = {}): Extract<CrankEmitted, { type: 'planned' }> {
  return {
    type: 'planned',
    pending: { ack_deposit: 0, ack_withdraw: 0, cleanup_deposit: 0 },
    readAtMs: n * 10_000,
    waiting: { ...NOT_WAITING, slots: { source: 1000 + 25 * n, target: 5000 + 50 * n }, ...overrides },
  };
}

function landed(action: 'ack_deposit' | 'ack_withdraw', indices: number[]): Extract<CrankEmitted, { type: 'attempt' }> {
  return {
    type: 'attempt',
    action,
    attempt: 1,
    outcome: 'landed',
    indices,
    signatures: ['sig'],
    error: null,
    willRetry: false,
    atMs: 0,
    durationMs: 0,
  };
}

describe('latency telemetry', () => {
  it('publishes the oldest age in slots at once and in seconds once the slot time is measured', async () => {
    const metrics = createMetrics(new Registry());
    // Scraped at the second read's time: no time has passed since it.
    const latency = createLatencyTelemetry(metrics, () => 10_000);
    const oldest = { ack_deposit: { index: 3, ageSlots: 50 }, ack_withdraw: { index: 1, ageSlots: 100 }, cleanup_deposit: null };
    latency.record(read(0, { oldest }), 0);
    expect(await metricValue(metrics.oldestPendingAgeSlots, { action: 'ack_deposit' })).toBe(50);
    expect((await metrics.oldestPendingAgeSeconds.get()).values).toEqual([]);

    latency.record(read(1, { oldest }), 10_000);
    expect(await metricValue(metrics.slotDuration, { chain: 'source' })).toBeCloseTo(0.4);
    expect(await metricValue(metrics.slotDuration, { chain: 'target' })).toBeCloseTo(0.2);
    expect(await metricValue(metrics.oldestPendingAgeSeconds, { action: 'ack_deposit' })).toBeCloseTo(20);
    expect(await metricValue(metrics.oldestPendingAgeSeconds, { action: 'ack_withdraw' })).toBeCloseTo(20);
    expect(await metricValue(metrics.oldestPendingAgeSeconds, { action: 'cleanup_deposit' })).toBe(0);
  });

  it('observes each landed vote at its age at the read plus the time since, held until the slot time is known', async () => {
    const metrics = createMetrics(new Registry());
    const latency = createLatencyTelemetry(metrics);
    const votes = {
      ack_deposit: [
        { index: 0, ageSlots: 10 },
        { index: 1, ageSlots: 5 },
      ],
      ack_withdraw: [],
    };
    latency.record(read(0, { votes }), 0);
    latency.record(landed('ack_deposit', [0, 1]), 2_000);
    expect(await histogramValue(metrics.voteLatency, 'count')).toBe(0);

    latency.record(read(1), 10_000);
    expect(await histogramValue(metrics.voteLatency, 'count', { action: 'ack_deposit' })).toBe(2);
    // (10 slots × 400 ms + 2 s) + (5 × 400 ms + 2 s)
    expect(await histogramValue(metrics.voteLatency, 'sum')).toBeCloseTo(10);
  });

  it('observes only votes the latest read planned, only for landed attempts', async () => {
    const metrics = createMetrics(new Registry());
    const latency = createLatencyTelemetry(metrics);
    latency.record(read(0), 0);
    latency.record(read(1, { votes: { ack_deposit: [], ack_withdraw: [{ index: 7, ageSlots: 1 }] } }), 10_000);
    latency.record(landed('ack_withdraw', [7, 8]), 10_500);
    latency.record({ ...landed('ack_withdraw', [7]), outcome: 'failed' }, 10_600);
    expect(await histogramValue(metrics.voteLatency, 'count', { action: 'ack_withdraw' })).toBe(1);
  });

  it('observes transfers seen finishing, by stage', async () => {
    const metrics = createMetrics(new Registry());
    const latency = createLatencyTelemetry(metrics);
    const entry = { index: 0, depositSlot: 1000, finalized: false, cleanedUp: false };
    latency.record(read(0, { deposits: [entry] }), 0);
    latency.record(read(1, { deposits: [{ ...entry, finalized: true }] }), 10_000);
    latency.record(read(2, { deposits: [], settledPrefix: 1 }), 20_000);
    expect(await histogramValue(metrics.transferLatency, 'count', { stage: 'ack_withdraw' })).toBe(1);
    expect(await histogramValue(metrics.transferLatency, 'count', { stage: 'cleanup' })).toBe(1);
  });
});
