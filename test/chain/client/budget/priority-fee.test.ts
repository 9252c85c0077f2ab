import { describe, expect, it } from 'vitest';
import { bidFrom } from '../../../../src/chain/client/budget/priority-fee.js';

const bounds = { minMicroLamports: 0, maxMicroLamports: 100_000 };
const slots = (...prices: number[]) => prices.map((prioritizationFee, i) => ({ slot: 500 + i, prioritizationFee }));

describe('bidFrom', () => {
  it('bids the 75th percentile (nearest rank) of the recent slots, and names the highest', () => {
    expect(bidFrom(slots(10, 40, 20, 30), 0, bounds)).toMatchObject({
      microLamportsPerUnit: 30,
      marketMicroLamports: 30,
      recentMaxMicroLamports: 40,
      capped: false,
    });
    expect(bidFrom([], 0, bounds).microLamportsPerUnit).toBe(0);
  });

  it('never below the floor, never above the cap', () => {
    expect(bidFrom(slots(0), 0, { minMicroLamports: 7, maxMicroLamports: 100 }).microLamportsPerUnit).toBe(7);
    expect(bidFrom(slots(500), 0, { minMicroLamports: 0, maxMicroLamports: 100 })).toMatchObject({ microLamportsPerUnit: 100, capped: true });
  });

  it('each expiry in a row doubles the bid, and reaches the cap within three even from a history of 0', () => {
    expect([0, 1, 2, 3, 4].map((expiries) => bidFrom(slots(0), expiries, bounds).microLamportsPerUnit)).toEqual([
      0, 25_000, 50_000, 100_000, 100_000,
    ]);
    expect([0, 1, 2].map((expiries) => bidFrom(slots(30_000), expiries, bounds).microLamportsPerUnit)).toEqual([30_000, 60_000, 100_000]);
    expect(bidFrom(slots(30_000), 2, bounds).capped).toBe(true);
  });
});
