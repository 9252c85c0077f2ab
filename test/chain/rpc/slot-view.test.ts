import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { FLOOR_REFUSALS_BEFORE_REBASE, SlotView } from '../../../src/chain/rpc/slot-view.js';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { captureLogs } from '../../support/log-capture.js';
import { metricSample, metricValue } from '../../support/metric-value.js';

/** The floor every read carries, and its re-base when every endpoint refuses it (docs/chain-client.md, "What a node can claim"). */

function view() {
  let now = 1_000_000;
  const metrics = createMetrics(new Registry());
  const logs = captureLogs('info');
  const slots = new SlotView({ chain: 'source', labels: ['http://a', 'http://b'], maxSlotLag: 128, metrics, logger: logs.logger, now: () => now });
  return { slots, metrics, logs, tick: (ms: number) => (now += ms) };
}

describe('SlotView', () => {
  it('the floor is the slot two endpoints reached, never one endpoint alone', async () => {
    const { slots, metrics } = view();
    slots.claim(0, 1_000);
    expect(slots.floor()).toBeUndefined();
    slots.claim(1, 990);
    expect(slots.floor()).toBe(990);
    slots.claim(0, 5_000_000);
    expect(slots.floor()).toBe(990);
    expect(await metricSample(metrics.rpcSlotFloor, { chain: 'source' })).toBe(990);
  });

  it(`after ${FLOOR_REFUSALS_BEFORE_REBASE} reads refused at the floor in a row: one warn line, the floor and every mark dropped, built again from the next answers`, async () => {
    const { slots, metrics, logs, tick } = view();
    // Two endpoints agreeing on a slot the chain has not made (nothing to judge them against yet).
    slots.claim(0, 9_000_000);
    slots.claim(1, 9_000_001);
    expect(slots.floor()).toBe(9_000_000);
    for (let i = 1; i < FLOOR_REFUSALS_BEFORE_REBASE; i++) slots.floorRefused();
    slots.floorHonoured();
    for (let i = 1; i < FLOOR_REFUSALS_BEFORE_REBASE; i++) slots.floorRefused();
    expect(slots.floor()).toBe(9_000_000);
    slots.floorRefused();
    expect(slots.floor()).toBeUndefined();
    expect(slots.latest(0)).toBeUndefined();
    expect(await metricValue(metrics.rpcSlotFloorRebases, { chain: 'source' })).toBe(1);
    expect(logs.records().filter((record) => record.level === 'warn')).toEqual([expect.objectContaining({ floor: 9_000_000, msg: expect.stringContaining('re-based') })]);
    tick(400);
    slots.claim(0, 1_000);
    slots.claim(1, 1_001);
    expect(slots.floor()).toBe(1_000);
  });

  it('a landing raises the floor, at most to the ceiling', () => {
    const { slots, tick } = view();
    for (let i = 0; i < 6; i++) {
      slots.claim(0, 1_000 + i * 5);
      slots.claim(1, 1_000 + i * 5);
      tick(400);
    }
    slots.restOn(1_030);
    expect(slots.floor()).toBe(1_030);
    slots.restOn(50_000_000);
    expect(slots.floor()).toBe(1_030);
  });
});
