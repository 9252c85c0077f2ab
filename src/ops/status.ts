import type { TrackerSummary, TransferPage } from '../transfers/transfer-queries.js';
import { countPhases } from '../transfers/transfer-queries.js';
import type { Phase, TransferView } from '../transfers/transfer-view.js';

/**
 * `ops status`: both trackers side by side, which side is ahead, and the unsettled transfers
 * per phase. Pure: built from the pages the CLI read (docs/operating.md "Phases").
 */

/** Pages `ops status` reads at most: the phase counts cover at most this many times MAX_TRANSFER_PAGE entries. */
export const MAX_STATUS_PAGES = 20;

export interface StatusReport {
  source: TrackerSummary;
  destination: TrackerSummary;
  /**
   * `source`: deposits with no destination entry yet (source entry_count above the
   * destination's); `even`: every deposit has its destination entry.
   */
  ahead: 'source' | 'even' | 'destination';
  deposits_without_destination_entry: number;
  /** Entries whose phases are counted: from the source settled_prefix on. */
  counted: { from: number; to: number; truncated: boolean };
  phases: Record<Phase, number>;
  /** The oldest unsettled transfer of each phase (the one to look at first). */
  oldest: Partial<Record<Phase, number>>;
  /** How long the oldest transfer of each phase has waited since its deposit (deposit_slot). */
  oldest_age: Partial<Record<Phase, TransferAge>>;
  /** The source chain's slot time as `ops status` measured it; null when its reads spanned too few slots. */
  source_slot_ms: number | null;
}

export interface TransferAge {
  /** Source slots from deposit_slot to the slot the last page was read at. */
  slots: number;
  /** `slots` times the measured slot time, rounded to a second; null when unmeasured. */
  seconds: number | null;
}

export function statusReport(pages: readonly TransferPage[], truncated: boolean, sourceSlotMs: number | null): StatusReport {
  const first = pages[0]!;
  const readSlot = pages.at(-1)!.slots.source;
  const transfers: TransferView[] = pages.flatMap((page) => page.transfers);
  const sourceCount = Number(first.source.entry_count);
  const targetCount = Number(first.destination.entry_count);
  const oldest: Partial<Record<Phase, number>> = {};
  const oldestAge: Partial<Record<Phase, TransferAge>> = {};
  for (const transfer of transfers) {
    if (oldest[transfer.phase] !== undefined) continue;
    oldest[transfer.phase] = transfer.index;
    const slots = Math.max(0, readSlot - Number(transfer.source.deposit_slot));
    oldestAge[transfer.phase] = { slots, seconds: sourceSlotMs === null ? null : Math.round((slots * sourceSlotMs) / 1000) };
  }
  return {
    source: first.source,
    destination: first.destination,
    ahead: sourceCount > targetCount ? 'source' : sourceCount === targetCount ? 'even' : 'destination',
    deposits_without_destination_entry: Math.max(0, sourceCount - targetCount),
    counted: { from: first.from, to: first.from + transfers.length, truncated },
    phases: countPhases(transfers),
    oldest,
    oldest_age: oldestAge,
    source_slot_ms: sourceSlotMs,
  };
}
