import { describe, expect, it } from 'vitest';
import { measuredSlotMs, SLOT_SAMPLES, withSlotSample, type SlotSample } from '../../src/machines/slot-clock.js';

const fill = (samples: SlotSample[]) => samples.reduce<SlotSample[]>((all, sample) => withSlotSample(all, sample), []);

describe('slot clock', () => {
  it('is unmeasured until two samples differ in slot and in time', () => {
    expect(measuredSlotMs([])).toBeNull();
    expect(measuredSlotMs(fill([{ slot: 10, atMs: 0 }]))).toBeNull();
    expect(
      measuredSlotMs(
        fill([
          { slot: 10, atMs: 0 },
          { slot: 10, atMs: 5000 },
        ]),
      ),
    ).toBeNull();
  });

  it('measures milliseconds per slot between the oldest and newest sample', () => {
    expect(
      measuredSlotMs(
        fill([
          { slot: 100, atMs: 1000 },
          { slot: 120, atMs: 5000 },
          { slot: 150, atMs: 21_000 },
        ]),
      ),
    ).toBe(400);
  });

  it('leaves out a sample whose slot is below the newest (a lagging endpoint)', () => {
    const samples = fill([
      { slot: 100, atMs: 0 },
      { slot: 200, atMs: 40_000 },
      { slot: 150, atMs: 45_000 },
    ]);
    expect(samples.map((sample) => sample.slot)).toEqual([100, 200]);
    expect(measuredSlotMs(samples)).toBe(400);
  });

  it('keeps the latest SLOT_SAMPLES samples, so a changed slot time shows within that many reads', () => {
    const slow = Array.from({ length: SLOT_SAMPLES }, (_, n) => ({ slot: n, atMs: n * 800 }));
    const fast = Array.from({ length: SLOT_SAMPLES }, (_, n) => ({ slot: SLOT_SAMPLES + n * 10, atMs: SLOT_SAMPLES * 800 + n * 4000 }));
    const samples = fill([...slow, ...fast]);
    expect(samples).toHaveLength(SLOT_SAMPLES);
    expect(measuredSlotMs(samples)).toBe(400);
  });
});
