import type { DepositEntry, TrackerHeader, WithdrawEntry } from '../../types.js';
import { decodeDepositEntries, decodeWithdrawEntries } from '../../codec/accounts.js';
import { DEPOSIT_ENTRY_SIZE, WITHDRAW_ENTRY_SIZE } from '../../codec/layout.js';
import type { Metrics } from '../../../metrics/metrics.js';
import type { ChainSide } from '../../../domain.js';
import { truncateAtRemoved, type ChainEndpoint } from './read-state.js';
import { ReadMeter, readEntryBytes, readTrackerHeader } from './tracker-reader.js';
import { toEntryIndex } from '../../port/authority-position.js';
import { nextTurn } from '../../../time.js';

/**
 * Read-only reads of arbitrary transfer ranges for operators (`npm run ops`, GET /transfers):
 * both tracker headers, then entries `from .. from+limit-1` of each tracker, through the same
 * readers and codecs as the crank. At confirmed: an operator wants the latest state.
 */

/** Entries per read and tracker; bounds one request's RPC traffic (docs/operating.md "Operating"). */
export const MAX_TRANSFERS_PER_READ = 500;

/**
 * Transfers decoded per event-loop turn (src/time.ts, nextTurn): a deposit and its withdrawal
 * entry (six base58 keys, five u64s) take about 7 us on a 2-vCPU VM, so a turn is about 0.25
 * ms, where a whole read decoded at once held the loop 4 to 8 ms, tens of ms on a loaded
 * machine, in front of every /health probe.
 */
export const TRANSFERS_DECODED_PER_TURN = 32;

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
  const [depositBytes, withdrawBytes] = await Promise.all([
    readEntryBytes(source.rpc, source.tracker, { start, end }, options(sourceRead.slot), meter, signal),
    readEntryBytes(target.rpc, target.tracker, { start, end: Math.max(start, targetEnd) }, options(targetRead.slot), meter, signal),
  ]);
  const deposits: DepositEntry[] = [];
  const withdrawEntries = new Map<number, WithdrawEntry>();
  for (let at = start; at < end; at += TRANSFERS_DECODED_PER_TURN) {
    if (at > start) await nextTurn(signal);
    const chunkEnd = Math.min(end, at + TRANSFERS_DECODED_PER_TURN);
    const depositRecords = records(depositBytes, DEPOSIT_ENTRY_SIZE, start, at, chunkEnd);
    deposits.push(...decodeDepositEntries(depositRecords, source.tracker.account, at));
    const withdrawRecords = records(withdrawBytes, WITHDRAW_ENTRY_SIZE, start, at, Math.min(chunkEnd, targetEnd));
    for (const [offset, entry] of decodeWithdrawEntries(withdrawRecords, target.tracker.account, at).entries())
      withdrawEntries.set(at + offset, entry);
  }
  const window = truncateAtRemoved({ header: targetRead.header, entries: withdrawEntries });
  return {
    sourceHeader: sourceRead.header,
    targetHeader: window.header,
    start,
    deposits,
    withdrawals: deposits.map((_, offset) => window.entries.get(start + offset) ?? null),
    slots: { source: sourceRead.slot, target: targetRead.slot },
  };
}

/** The records of entries `at .. until-1` (none when `until <= at`) in a window of `size`-byte records that starts at entry `start`. */
function records(window: Uint8Array, size: number, start: number, at: number, until: number): Uint8Array {
  return window.subarray((at - start) * size, (Math.max(at, until) - start) * size);
}
