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
    slots.claim(0, 1_000, 'confirmed');
    expect(slots.floor('confirmed')).toBeUndefined();
    slots.claim(1, 990, 'confirmed');
    expect(slots.floor('confirmed')).toBe(990);
    slots.claim(0, 5_000_000, 'confirmed');
    expect(slots.floor('confirmed')).toBe(990);
    expect(await metricSample(metrics.rpcSlotFloor, { chain: 'source' })).toBe(990);
  });

  it(`after ${FLOOR_REFUSALS_BEFORE_REBASE} reads refused at the floor in a row: one warn line, the floor and every mark dropped, built again from the next answers`, async () => {
    const { slots, metrics, logs, tick } = view();
    // Two endpoints agreeing on a slot the chain has not made (nothing to judge them against yet).
    slots.claim(0, 9_000_000, 'confirmed');
    slots.claim(1, 9_000_001, 'confirmed');
    expect(slots.floor('confirmed')).toBe(9_000_000);
    for (let i = 1; i < FLOOR_REFUSALS_BEFORE_REBASE; i++) slots.floorRefused('confirmed');
    slots.floorHonoured('confirmed');
    for (let i = 1; i < FLOOR_REFUSALS_BEFORE_REBASE; i++) slots.floorRefused('confirmed');
    expect(slots.floor('confirmed')).toBe(9_000_000);
    slots.floorRefused('confirmed');
    expect(slots.floor('confirmed')).toBeUndefined();
    expect(slots.latest(0)).toBeUndefined();
    expect(await metricValue(metrics.rpcSlotFloorRebases, { chain: 'source' })).toBe(1);
    expect(logs.records().filter((record) => record.level === 'warn')).toEqual([
      expect.objectContaining({ floor: 9_000_000, msg: expect.stringContaining('re-based') }),
    ]);
    tick(400);
    slots.claim(0, 1_000, 'confirmed');
    slots.claim(1, 1_001, 'confirmed');
    expect(slots.floor('confirmed')).toBe(1_000);
  });

  it('a landing raises the floor, at most to the ceiling', () => {
    const { slots, tick } = view();
    for (let i = 0; i < 6; i++) {
      slots.claim(0, 1_000 + i * 5, 'confirmed');
      slots.claim(1, 1_000 + i * 5, 'confirmed');
      tick(400);
    }
    slots.restOn(1_030, 'confirmed');
    expect(slots.floor('confirmed')).toBe(1_030);
    slots.restOn(50_000_000, 'confirmed');
    expect(slots.floor('confirmed')).toBe(1_030);
  });

  describe('one floor per bank (Agave answers each read from the bank of its commitment)', () => {
    /** Two endpoints whose confirmed bank is at `confirmed` and finalized bank 32 behind, sampled every 400 ms. */
    function banksAt(slots: SlotView, tick: (ms: number) => number, confirmed: number) {
      for (let i = 0; i < 6; i++) {
        for (const index of [0, 1]) {
          slots.claim(index, confirmed + i, 'confirmed');
          slots.claim(index, confirmed + i - 32, 'finalized');
        }
        tick(400);
      }
      return confirmed + 5;
    }

    it('a finalized read carries the slot two finalized answers reached, never one only confirmed has reached', () => {
      const { slots, tick } = view();
      const confirmed = banksAt(slots, tick, 1_000);
      expect(slots.floor('confirmed')).toBe(confirmed);
      expect(slots.floor('finalized')).toBe(confirmed - 32);
      // A processed read (a status poll) is judged against the confirmed floor: the head is never behind it.
      expect(slots.floor('processed')).toBe(confirmed);
    });

    it('before any finalized answer a finalized read carries no floor at all', () => {
      const { slots } = view();
      slots.claim(0, 1_000, 'confirmed');
      slots.claim(1, 1_000, 'confirmed');
      expect(slots.floor('confirmed')).toBe(1_000);
      expect(slots.floor('finalized')).toBeUndefined();
    });

    it("a processed context slot (a status poll) is never a mark: the confirmed floor and the endpoint's slot stay where confirmed answers put them", () => {
      const { slots, tick } = view();
      const confirmed = banksAt(slots, tick, 1_000);
      expect(slots.claim(0, confirmed + 2, 'processed')).toBe(true);
      expect(slots.claim(1, confirmed + 3, 'processed')).toBe(true);
      expect(slots.floor('confirmed')).toBe(confirmed);
      expect(slots.latest(0)?.slot).toBe(confirmed);
    });

    it('a processed or finalized claim beyond the ceiling is an outlier, counted and ignored', async () => {
      const { slots, tick, metrics } = view();
      const confirmed = banksAt(slots, tick, 1_000);
      expect(slots.claim(0, confirmed + 1_000_000, 'processed')).toBe(false);
      expect(slots.claim(1, confirmed + 1_000_000, 'finalized')).toBe(false);
      expect(slots.floor('finalized')).toBe(confirmed - 32);
      expect(await metricValue(metrics.rpcSlotOutliers, { direction: 'ahead' })).toBe(2);
    });

    it("a landing seen confirmed raises the confirmed floor only; one seen finalized raises the finalized floor (and so the confirmed reads' too)", () => {
      const { slots, tick } = view();
      const confirmed = banksAt(slots, tick, 1_000);
      slots.restOn(confirmed + 1, 'confirmed');
      expect(slots.floor('confirmed')).toBe(confirmed + 1);
      expect(slots.floor('finalized')).toBe(confirmed - 32);
      slots.restOn(confirmed - 10, 'finalized');
      expect(slots.floor('finalized')).toBe(confirmed - 10);
      expect(slots.floor('confirmed')).toBe(confirmed + 1);
    });

    it('refusals count per bank: finalized reads refused at their floor re-base, confirmed reads answered in between do not reset them', () => {
      const { slots, tick, metrics } = view();
      banksAt(slots, tick, 1_000);
      for (let i = 0; i < FLOOR_REFUSALS_BEFORE_REBASE; i++) {
        slots.floorRefused('finalized');
        slots.floorHonoured('confirmed');
      }
      expect(slots.floor('finalized')).toBeUndefined();
      expect(slots.floor('confirmed')).toBeUndefined();
      return expect(metricValue(metrics.rpcSlotFloorRebases, { chain: 'source' })).resolves.toBe(1);
    });
  });
});
