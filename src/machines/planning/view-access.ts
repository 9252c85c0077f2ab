import type { TrackerWindow } from '../../chain/bridge-chains.js';
import { BridgeError } from '../../errors.js';

/**
 * Reading a BridgeView the way the planners need it: single entries by index, failing loudly
 * when the read does not cover what voting needs (this authority's position:
 * src/chain/authority-position.ts).
 */

/**
 * Entry `index` of a window, which the read must hold: a planner asks for the entry at each
 * position it starts from, so a read that does not start there fails loudly instead of
 * skipping votes silently.
 */
export function entryAt<E>(window: TrackerWindow<E>, index: number): E {
  const entry = window.entries.get(index);
  if (entry === undefined) {
    const indices = [...window.entries.keys()];
    const windowStart = indices[0] ?? 0;
    const windowEnd = (indices.at(-1) ?? -1) + 1;
    throw new BridgeError(
      'CRANK__ENTRY_NOT_FOUND',
      { tracker: window.header.kind, index, windowStart, windowEnd },
      `${window.header.kind} entry ${index} is not among the ${indices.length} entries BridgeChains.readState read ` +
        `(between ${windowStart} and ${windowEnd}); the read must hold entries from every position ` +
        'the crank votes or cleans from (docs/crank.md "What the planners read")',
    );
  }
  return entry;
}

/**
 * The entries of a window from `first` on while they are consecutive and below `end`: a
 * bounded read ends a run before entry_count, and the planners stop there (the rest is the
 * next cycle's work). The entry at `first` itself must have been read (see entryAt).
 */
export function* readRun<E>(window: TrackerWindow<E>, first: number, end: number): Generator<[number, E]> {
  if (first >= end) return;
  yield [first, entryAt(window, first)];
  for (let index = first + 1; index < end; index++) {
    const entry = window.entries.get(index);
    if (entry === undefined) return;
    yield [index, entry];
  }
}

/**
 * An entry index or count as a JS number. Exact: a tracker account is at most 10 MiB, so
 * capacity (and with it every index) stays far below 2^53.
 */
export function entryIndex(value: bigint): number {
  return Number(value);
}
