import type { DepositEntry, TrackerHeader, WithdrawEntry } from '../types.js';
import { decodeDepositEntries, decodeWithdrawEntries } from '../codec/accounts.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { ChainSide } from '../../domain.js';
import { truncateAtRemoved, type ChainEndpoint } from './read-state.js';
import { ReadMeter, readEntries, readEntryBytes, readTrackerHeader } from './tracker-reader.js';
import { toEntryIndex } from '../authority-position.js';

/**
 * Read-only reads of arbitrary transfer ranges for operators (`npm run ops`, GET /transfers):
 * both tracker headers, then entries `from .. from+limit-1` of each tracker, through the same
 * readers and codecs as the crank. At confirmed: an operator wants the latest state.
 */

/** Entries per read and tracker; bounds one request's RPC traffic (docs/operating.md "Operating"). */
export const MAX_TRANSFERS_PER_READ = 500;

/** Every read of a transfer range is at this commitment. */
const TRANSFER_READ_COMMITMENT = 'confirmed' as const;

export interface TransferRangeContext {
  source: ChainEndpoint;
  target: ChainEndpoint;
  metrics: Metrics;
}

/** Both headers and the entries of `[start, start + deposits.length)`; `withdrawals[i]` is null past the destination's entry_count. */
export interface TransferRange {
  sourceHeader: TrackerHeader;
  targetHeader: TrackerHeader;
  start: number;
  deposits: DepositEntry[];
  withdrawals: Array<WithdrawEntry | null>;
  /** The slot each chain's node answered the header read at. */
  slots: Record<ChainSide, number>;
}

export async function readTransferRange(ctx: TransferRangeContext, from: number, limit: number, signal: AbortSignal): Promise<TransferRange> {
  if (!Number.isSafeInteger(from) || from < 0 || !Number.isSafeInteger(limit) || limit < 0 || limit > MAX_TRANSFERS_PER_READ) {
    throw new RangeError(`a transfer read takes 0 <= from and 0 <= limit <= ${MAX_TRANSFERS_PER_READ}, got from ${from}, limit ${limit}`);
  }
  const meter = new ReadMeter(ctx.metrics);
  const { source, target } = ctx;
  const [sourceRead, targetRead] = await Promise.all([
    readTrackerHeader(source.rpc, source.tracker, TRANSFER_READ_COMMITMENT, meter, signal),
    readTrackerHeader(target.rpc, target.tracker, TRANSFER_READ_COMMITMENT, meter, signal),
  ]);
  const sourceCount = toEntryIndex(sourceRead.header.entryCount, source.tracker.account, 'entry_count');
  const targetCount = toEntryIndex(targetRead.header.entryCount, target.tracker.account, 'entry_count');
  const start = Math.min(from, sourceCount);
  const end = Math.min(from + limit, sourceCount);
  const targetEnd = Math.min(end, targetCount);
  const options = (slot: number) => ({ commitment: TRANSFER_READ_COMMITMENT, minContextSlot: slot });
  const [depositBytes, withdrawEntries] = await Promise.all([
    readEntryBytes(source.rpc, source.tracker, { start, end }, options(sourceRead.slot), meter, signal),
    readEntries(
      target.rpc,
      target.tracker,
      [{ start, end: Math.max(start, targetEnd) }],
      decodeWithdrawEntries,
      options(targetRead.slot),
      meter,
      signal,
    ),
  ]);
  const window = truncateAtRemoved({ header: targetRead.header, entries: withdrawEntries });
  const deposits = decodeDepositEntries(depositBytes, source.tracker.account, start);
  return {
    sourceHeader: sourceRead.header,
    targetHeader: window.header,
    start,
    deposits,
    withdrawals: deposits.map((_, offset) => window.entries.get(start + offset) ?? null),
    slots: { source: sourceRead.slot, target: targetRead.slot },
  };
}
