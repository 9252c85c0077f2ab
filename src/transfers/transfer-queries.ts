import * as z from 'zod';
import { MAX_TRANSFERS_PER_READ, type TransferRange } from '../chain/client/read/read-transfers.js';
import type { TrackerHeader } from '../chain/types.js';
import { BridgeError } from '../errors.js';
import { nextTurn } from '../time.js';
import { crankDisabledError } from '../machines/disabled-crank.js';
import { integerParameter } from './transfer-params.js';
import { PHASES, transferView, type Phase, type TransferView } from './transfer-view.js';

/**
 * The read-only transfer queries both GET /transfers and `npm run ops` answer from: pages of
 * transfers, one transfer, and the trackers side by side with transfers per phase. The range
 * reader (chain client) is passed in; everything here is pure computation over what it returns.
 */

/** Default and largest page of GET /transfers and `ops` (one range read per page). */
const DEFAULT_TRANSFER_PAGE = 50;
export const MAX_TRANSFER_PAGE = MAX_TRANSFERS_PER_READ;

/**
 * Views built per event-loop turn (src/time.ts, nextTurn): 128 of the largest kind (16
 * authorities voting on both chains) take about 0.15 ms on a 2-vCPU VM, so the views of a page
 * never hold the loop in front of /health however many transfers it has.
 */
export const VIEWS_PER_TURN = 128;

export type ReadTransferRange = (from: number, limit: number, signal: AbortSignal) => Promise<TransferRange>;

interface AuthorityPosition {
  authority: string;
  next_index: string;
  last_vote: string;
}

export interface TrackerSummary {
  entry_count: string;
  settled_prefix: string;
  generation: string;
  threshold: number;
  authorities: AuthorityPosition[];
}

export interface TransferPage {
  source: TrackerSummary;
  destination: TrackerSummary;
  from: number;
  limit: number;
  /** `from` of the next page; null when this page reaches the source entry_count. */
  next: number | null;
  transfers: TransferView[];
  /** The slot each chain's node answered this page's read at: entry slots age against it. */
  slots: { source: number; destination: number };
}

/**
 * The parameters of a page and of one transfer. They arrive raw (query strings, path segments,
 * CLI arguments) and are parsed with these schemas (transfer-params.ts), so that the HTTP layer
 * and the CLI refuse the same values with the same TRANSFER__INVALID_PARAMETER message.
 * `from` defaults to 0, `limit` to DEFAULT_TRANSFER_PAGE, at most MAX_TRANSFER_PAGE.
 */
export const transferPageParams = z.object({
  from: integerParameter().default(0),
  limit: integerParameter(MAX_TRANSFER_PAGE).default(DEFAULT_TRANSFER_PAGE),
});
export type TransferPageParams = z.output<typeof transferPageParams>;
export const transferIndexParams = z.object({ index: integerParameter() });
export type TransferIndexParams = z.output<typeof transferIndexParams>;

export interface TransferQueries {
  page(params: TransferPageParams, signal: AbortSignal): Promise<TransferPage>;
  /** Throws TRANSFER__NOT_FOUND past the source entry_count. */
  transfer(index: number, signal: AbortSignal): Promise<TransferView>;
}

export function createTransferQueries(read: ReadTransferRange): TransferQueries {
  return {
    page: async ({ from, limit }, signal) => transferPage(await read(from, limit, signal), from, limit, signal),
    transfer: async (index, signal) => {
      const range = await read(index, 1, signal);
      const [view] = (await transferPage(range, index, 1, signal)).transfers;
      if (view === undefined) throw transferNotFound(index, range.sourceHeader);
      return view;
    },
  };
}

/** Rejects with `signal`'s reason once it aborts (checked between turns). */
export async function transferPage(range: TransferRange, from: number, limit: number, signal: AbortSignal): Promise<TransferPage> {
  const transfers: TransferView[] = [];
  for (const [offset, deposit] of range.deposits.entries()) {
    if (offset > 0 && offset % VIEWS_PER_TURN === 0) await nextTurn(signal);
    transfers.push(
      transferView({
        index: range.start + offset,
        deposit,
        withdraw: range.withdrawals[offset] ?? null,
        sourceHeader: range.sourceHeader,
        targetHeader: range.targetHeader,
      }),
    );
  }
  const end = range.start + transfers.length;
  return {
    source: trackerSummary(range.sourceHeader),
    destination: trackerSummary(range.targetHeader),
    from,
    limit,
    next: BigInt(end) < range.sourceHeader.entryCount && transfers.length > 0 ? end : null,
    transfers,
    slots: { source: range.slots.source, destination: range.slots.target },
  };
}

function trackerSummary(header: TrackerHeader): TrackerSummary {
  return {
    entry_count: header.entryCount.toString(),
    settled_prefix: header.settledPrefix.toString(),
    generation: header.generation.toString(),
    threshold: header.threshold,
    authorities: header.authorities.map((authority, slot) => ({
      authority,
      next_index: (header.votes[slot]?.nextIndex ?? 0n).toString(),
      last_vote: header.votes[slot]?.lastVote ?? 'None',
    })),
  };
}

export function countPhases(transfers: readonly TransferView[]): Record<Phase, number> {
  const counts = Object.fromEntries(PHASES.map((phase) => [phase, 0])) as Record<Phase, number>;
  for (const transfer of transfers) counts[transfer.phase] += 1;
  return counts;
}

/** Without runtime configuration there is no chain to read: the same refusal as POST /crank/once. */
export function createDisabledTransferQueries(): TransferQueries {
  return createTransferQueries(() => Promise.reject(crankDisabledError()));
}

function transferNotFound(index: number, header: TrackerHeader): BridgeError<'TRANSFER__NOT_FOUND'> {
  const entryCount = Number(header.entryCount);
  return new BridgeError('TRANSFER__NOT_FOUND', { index, entryCount });
}
