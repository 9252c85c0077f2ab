/**
 * Which entries a read fetches: a bounded run from each position a planner starts at, so that
 * the cost of a cycle depends on what it can act on, neither on the size of the tracker nor on
 * any count a header claims.
 */

export interface EntryRange {
  /** First entry index. */
  start: number;
  /** One past the last entry index. */
  end: number;
}

/**
 * The entries to read: `perPosition` entries from each position, cut at entry_count, sorted,
 * overlapping and adjacent runs merged. At most positions × perPosition entries in total.
 */
export function positionRanges(positions: readonly number[], entryCount: number, perPosition: number): EntryRange[] {
  if (!Number.isSafeInteger(perPosition) || perPosition < 1) {
    throw new RangeError(`entriesPerPosition must be a positive integer, got ${perPosition}`);
  }
  const runs = positions
    .filter((start) => start < entryCount)
    .map((start) => ({ start, end: Math.min(entryCount, start + perPosition) }))
    .sort((a, b) => a.start - b.start);
  const merged: EntryRange[] = [];
  for (const run of runs) {
    const last = merged.at(-1);
    if (last !== undefined && run.start <= last.end) last.end = Math.max(last.end, run.end);
    else merged.push({ ...run });
  }
  return merged;
}

/**
 * Splits entries `start .. end-1` into ranges of whole entries of at most `maxBytes` bytes
 * each, one dataSlice request per range.
 */
export function sliceRanges(range: EntryRange, entrySize: number, maxBytes: number): EntryRange[] {
  const perSlice = Math.floor(maxBytes / entrySize);
  if (perSlice < 1) throw new RangeError(`a slice of ${maxBytes} bytes cannot hold one ${entrySize}-byte entry`);
  const ranges: EntryRange[] = [];
  for (let start = range.start; start < range.end; start += perSlice) {
    ranges.push({ start, end: Math.min(start + perSlice, range.end) });
  }
  return ranges;
}

/**
 * Groups sorted, distinct entry indices into ranges that each fit one slice, so that scattered
 * entries cost one request per neighbourhood rather than one per entry.
 */
export function coveringRanges(sortedIndices: readonly number[], entrySize: number, maxBytes: number): EntryRange[] {
  const perSlice = Math.floor(maxBytes / entrySize);
  const ranges: EntryRange[] = [];
  for (const index of sortedIndices) {
    const last = ranges.at(-1);
    if (last !== undefined && index + 1 - last.start <= perSlice) last.end = index + 1;
    else ranges.push({ start: index, end: index + 1 });
  }
  return ranges;
}
