import type { HeldTransfer } from '../machines/watchdog/flow-breaker.js';
import type { TransferPage } from '../transfers/transfer-queries.js';
import { nextTurn } from '../time.js';

/**
 * The bytes of a GET /transfers answer, bounded. They are what the routes share between requests
 * (src/transfers/shared-reads.ts): a request costs a lookup and a socket write, not a
 * 200 KB serialization (5,756 requests in 10 s serialized each page anew and took /health's p50
 * to 859 ms), and a read keeps only these bytes once encoded, not the page they were built from.
 *
 * A page is at most MAX_TRANSFER_PAGE_BYTES: 500 transfers of a bridge with many authorities
 * (every one listed as a voter on both chains) would be about 1.2 MB. A page over the bound is
 * cut after the last transfer that fits, and its `next` names the first one left out.
 *
 * The transfers are serialized TRANSFERS_ENCODED_PER_TURN at a time, with a turn of the event
 * loop between (src/time.ts, nextTurn): serialized at once, a page held the loop about 4 ms,
 * tens of ms on a loaded machine, in front of every /health probe.
 */

export const MAX_TRANSFER_PAGE_BYTES = 256 * 1024;

/** About 0.45 ms of JSON.stringify on a 2-vCPU VM for 64 transfers of the largest kind (130 KB). */
export const TRANSFERS_ENCODED_PER_TURN = 64;

/** A page of transfers with the one the flow breaker holds now (null: none), as /health shows it. */
export type TransferPageAnswer = TransferPage & { flow_held: HeldTransfer | null };

/** Rejects with `signal`'s reason once it aborts (checked between turns). */
export function transferPageBody(page: TransferPageAnswer, signal: AbortSignal): Promise<Buffer> {
  return encodeWithin(page, MAX_TRANSFER_PAGE_BYTES, signal);
}

async function encodeWithin(page: TransferPageAnswer, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  const frame = (next: number | null) => JSON.stringify({ ...page, next, transfers: [] });
  // The frame with the longest `next` it can carry, then each transfer and its comma, serialized
  // once and only while it fits: a page cut at half its transfers serializes half of them.
  let bytes = Buffer.byteLength(frame(Number.MAX_SAFE_INTEGER));
  const chunks: Buffer[] = [];
  let fitted = 0;
  let full = false;
  for (let at = 0; at < page.transfers.length && !full; at += TRANSFERS_ENCODED_PER_TURN) {
    if (at > 0) await nextTurn(signal);
    const parts: string[] = [];
    for (const transfer of page.transfers.slice(at, at + TRANSFERS_ENCODED_PER_TURN)) {
      const part = JSON.stringify(transfer);
      bytes += Buffer.byteLength(part) + 1;
      full = bytes > maxBytes;
      if (full) break;
      parts.push(part);
    }
    fitted += parts.length;
    if (parts.length > 0) chunks.push(Buffer.from(`${chunks.length > 0 ? ',' : ''}${parts.join(',')}`));
  }
  const next = fitted === page.transfers.length ? page.next : page.transfers[fitted]!.index;
  const [head, tail] = splitAtTransfers(frame(next));
  return Buffer.concat([Buffer.from(head), ...chunks, Buffer.from(tail)]);
}

/** The frame's text before and after the inside of its empty `"transfers":[]`. */
function splitAtTransfers(frame: string): [string, string] {
  const marker = '"transfers":[';
  const at = frame.indexOf(`${marker}]`) + marker.length;
  return [frame.slice(0, at), frame.slice(at)];
}
