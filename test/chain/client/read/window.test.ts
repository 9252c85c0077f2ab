import { describe, expect, it } from 'vitest';
import { isBridgeError } from '../../../../src/errors.js';
import { truncateAtRemoved } from '../../../../src/chain/client/read/read-state.js';
import { coveringRanges, positionRanges, sliceRanges } from '../../../../src/chain/client/read/window.js';
import { authoritySlot, ownNextIndex, toEntryIndex } from '../../../../src/chain/port/authority-position.js';
import type { TrackerHeader, WithdrawEntry } from '../../../../src/chain/types.js';

const ACCOUNT = 'Tracker1111111111111111111111111111111111111';

function header(overrides: Partial<TrackerHeader> = {}): TrackerHeader {
  return {
    kind: 'WithdrawTracker',
    sourceChainId: 1,
    targetChainId: 2,
    threshold: 2,
    authorityCount: 3,
    entryCount: 10n,
    capacity: 100n,
    settledPrefix: 4n,
    generation: 0n,
    governance: 'Gov11111111111111111111111111111111111111111',
    authorities: ['A', 'B', 'C'],
    votes: [
      { nextIndex: 7n, lastVote: 'Yes' },
      { nextIndex: 9n, lastVote: 'Yes' },
      { nextIndex: 2n, lastVote: 'No' },
    ],
    ...overrides,
  };
}

describe('positionRanges', () => {
  it.each([
    { positions: [0, 0, 0], entryCount: 0, ranges: [], why: 'empty tracker' },
    { positions: [60, 60, 60], entryCount: 60, ranges: [], why: 'nothing pending: nothing read' },
    {
      positions: [50_000, 50_003, 50_010],
      entryCount: 50_010,
      ranges: [{ start: 50_000, end: 50_010 }],
      why: 'close positions: one run to entry_count',
    },
    {
      positions: [100, 100, 40_000],
      entryCount: 50_000,
      ranges: [
        { start: 100, end: 165 },
        { start: 40_000, end: 40_065 },
      ],
      why: 'an unclaimed transfer holds settled_prefix far behind: two runs, never the 40,000 between',
    },
    { positions: [12, 30, 40], entryCount: 60, ranges: [{ start: 12, end: 60 }], why: 'overlapping runs merge, cut at entry_count' },
    {
      positions: [0, 65, 200],
      entryCount: 1_000,
      ranges: [
        { start: 0, end: 130 },
        { start: 200, end: 265 },
      ],
      why: 'adjacent runs merge',
    },
    { positions: [5, 11, 9], entryCount: 8, ranges: [{ start: 5, end: 8 }], why: 'positions beyond entry_count read nothing' },
  ])('$why', ({ positions, entryCount, ranges }) => {
    expect(positionRanges(positions, entryCount, 65)).toEqual(ranges);
  });

  it('reads at most positions x perPosition entries whatever the counters', () => {
    const ranges = positionRanges([0, 1_000_000, 4_503_599_627_370_000], 4_503_599_627_370_496, 65);
    expect(ranges.reduce((sum, range) => sum + range.end - range.start, 0)).toBe(195);
  });

  it('refuses a per-position count that is not a positive integer', () => {
    expect(() => positionRanges([0], 10, 0)).toThrow(RangeError);
    expect(() => positionRanges([0], 10, 1.5)).toThrow(RangeError);
  });
});

describe('sliceRanges', () => {
  it('cuts a window into whole entries of at most maxBytes', () => {
    // 160-byte entries, 64 KiB slices: 409 entries (65,440 bytes) per slice.
    const ranges = sliceRanges({ start: 100, end: 1000 }, 160, 64 * 1024);
    expect(ranges).toEqual([
      { start: 100, end: 509 },
      { start: 509, end: 918 },
      { start: 918, end: 1000 },
    ]);
    for (const range of ranges) expect((range.end - range.start) * 160).toBeLessThanOrEqual(64 * 1024);
  });

  it.each([
    { range: { start: 5, end: 5 }, expected: [] },
    { range: { start: 0, end: 1 }, expected: [{ start: 0, end: 1 }] },
    { range: { start: 0, end: 455 }, expected: [{ start: 0, end: 455 }] },
    {
      range: { start: 0, end: 456 },
      expected: [
        { start: 0, end: 455 },
        { start: 455, end: 456 },
      ],
    },
  ])('144-byte entries $range.start..$range.end', ({ range, expected }) => {
    expect(sliceRanges(range, 144, 64 * 1024)).toEqual(expected);
  });

  it('refuses a slice size below one entry', () => {
    expect(() => sliceRanges({ start: 0, end: 3 }, 160, 100)).toThrow(RangeError);
  });
});

describe('coveringRanges', () => {
  it.each([
    { indices: [], expected: [] },
    { indices: [7], expected: [{ start: 7, end: 8 }] },
    { indices: [3, 4, 5, 9], expected: [{ start: 3, end: 10 }] },
    { indices: [0, 9], perSliceBytes: 160 * 10, expected: [{ start: 0, end: 10 }] },
    {
      indices: [0, 10, 20],
      perSliceBytes: 160 * 10,
      expected: [
        { start: 0, end: 1 },
        { start: 10, end: 11 },
        { start: 20, end: 21 },
      ],
    },
    {
      indices: [2, 5000],
      expected: [
        { start: 2, end: 3 },
        { start: 5000, end: 5001 },
      ],
    },
  ])('$indices', ({ indices, expected, perSliceBytes }) => {
    expect(coveringRanges(indices, 160, perSliceBytes ?? 64 * 1024)).toEqual(expected);
  });
});

describe('toEntryIndex', () => {
  it('passes indices up to Number.MAX_SAFE_INTEGER', () => {
    expect(toEntryIndex(0n, ACCOUNT, 'entry_count')).toBe(0);
    expect(toEntryIndex(BigInt(Number.MAX_SAFE_INTEGER), ACCOUNT, 'entry_count')).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('rejects a larger u64 naming the account and field', () => {
    const attempt = () => toEntryIndex(BigInt(Number.MAX_SAFE_INTEGER) + 1n, ACCOUNT, 'votes[2].next_index');
    expect(attempt).toThrow(/votes\[2\]\.next_index is 9007199254740992, above the largest entry index/);
    try {
      attempt();
    } catch (err) {
      expect(isBridgeError(err, 'CHAIN__MALFORMED_ACCOUNT') && err.context.account).toBe(ACCOUNT);
    }
  });
});

describe('authoritySlot and ownNextIndex', () => {
  it('finds the authority and its next_index', () => {
    expect(authoritySlot(header(), 'B', { account: ACCOUNT, chain: 'target' })).toBe(1);
    expect(ownNextIndex(header(), 'C', { account: ACCOUNT, chain: 'target' })).toBe(2);
  });

  it('names the authority and the tracker when absent', () => {
    let caught: unknown;
    try {
      authoritySlot(header(), 'Z', { account: ACCOUNT, chain: 'target' });
    } catch (err) {
      caught = err;
    }
    expect(isBridgeError(caught, 'CHAIN__AUTHORITY_NOT_FOUND')).toBe(true);
    expect((caught as Error).message).toContain(
      `authority Z (BRIDGE_AUTHORITY_KEYPAIR) is not one of the 3 authorities of WithdrawTracker ${ACCOUNT} on the destination chain`,
    );
  });

  it('names the tracker by kind and chain where the caller (a planner) has no address', () => {
    expect(() => ownNextIndex(header(), 'Z', { chain: 'target' })).toThrow(
      expect.objectContaining({
        code: 'CHAIN__AUTHORITY_NOT_FOUND',
        context: { chain: 'target', authority: 'Z' },
        message: expect.stringContaining('authorities of WithdrawTracker on the destination chain'),
      }),
    );
  });
});

describe('truncateAtRemoved', () => {
  const voting = (amount: bigint): WithdrawEntry => ({
    status: 'Voting',
    createdTokenAccount: 'Pending',
    yesVotes: 1,
    noVotes: 0,
    amount,
    recipient: 'R',
    sourceMint: 'M',
    result: { kind: 'None' },
    tokenAccount: 'T',
    finalizedSlot: 0n,
  });
  const empty: WithdrawEntry = { ...voting(0n), status: 'Empty', yesVotes: 0 };

  it('keeps a window without removed entries as it is', () => {
    const window = {
      header: header(),
      entries: new Map([
        [8, voting(1n)],
        [9, voting(2n)],
      ]),
    };
    expect(truncateAtRemoved(window)).toBe(window);
  });

  it('cuts at the first removed entry and lowers entry_count to it', () => {
    const window = {
      header: header(),
      entries: new Map([
        [7, voting(1n)],
        [8, empty],
        [9, empty],
      ]),
    };
    const truncated = truncateAtRemoved(window);
    expect([...truncated.entries]).toEqual([[7, voting(1n)]]);
    expect(truncated.header.entryCount).toBe(8n);
    expect(truncated.header.votes).toBe(window.header.votes);
  });

  it('cuts across runs: a removed entry in an earlier run drops the later runs', () => {
    const window = {
      header: header(),
      entries: new Map([
        [2, voting(1n)],
        [3, empty],
        [7, voting(2n)],
      ]),
    };
    const truncated = truncateAtRemoved(window);
    expect([...truncated.entries.keys()]).toEqual([2]);
    expect(truncated.header.entryCount).toBe(3n);
  });
});
