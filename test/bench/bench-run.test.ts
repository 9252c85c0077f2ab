import { describe, expect, it } from 'vitest';
import { measureReadCost } from '../../bench/read-cost.js';
import { TRACKER_HEADER_SIZE, DEPOSIT_ENTRY_SIZE, trackerAccountSize } from '../../src/chain/codec/layout.js';

/**
 * Smoke test of the bench harness: the read-cost bench's smallest configuration through its
 * exported function (devnet, world bootstrap, seeding, deposits, real readState), not the full
 * bench. It checks the shape and the property the bench exists to show, not a timing.
 */

describe('bench: read-cost', () => {
  it('reads the same bytes for a 100-entry and a 2,000-entry tracker with the same 10 pending deposits', async () => {
    const small = await measureReadCost(100, { reads: 2 });
    const large = await measureReadCost(2_000, { reads: 2 });

    for (const [row, capacity] of [
      [small, 100],
      [large, 2_000],
    ] as const) {
      expect(row).toMatchObject({ capacity, settled: capacity - 20, pending: 10 });
      // Two source headers (finalized data, confirmed positions) and the 10 pending entries; the destination holds no entry yet.
      expect(row.sourceBytesPerRead).toBe(2 * TRACKER_HEADER_SIZE + 10 * DEPOSIT_ENTRY_SIZE);
      expect(row.targetBytesPerRead).toBe(TRACKER_HEADER_SIZE);
      expect(row.wholeAccountsBytes).toBe(trackerAccountSize('DepositTracker', capacity) + trackerAccountSize('WithdrawTracker', capacity));
      expect(row.medianReadMs).toBeGreaterThan(0);
      expect(row.p95ReadMs).toBeGreaterThanOrEqual(row.medianReadMs);
    }
    expect(large.sourceBytesPerRead).toBe(small.sourceBytesPerRead);
    expect(large.wholeAccountsBytes).toBeGreaterThan(small.wholeAccountsBytes * 10);
  });
});
