import type { TransferPage } from '../machines/transfers/transfer-queries.js';

/**
 * The bytes of a GET /transfers answer, bounded. They are what the routes share between requests
 * (src/machines/transfers/shared-reads.ts): a request costs a lookup and a socket write, not a
 * 200 KB serialization (5,756 requests in 10 s serialized each page anew and took /health's p50
 * to 859 ms), and a read keeps only these bytes once encoded, not the page they were built from.
 *
 * A page is at most MAX_TRANSFER_PAGE_BYTES: 500 transfers of a bridge with many authorities
 * (every one listed as a voter on both chains) would be about 1.2 MB. A page over the bound is
 * cut after the last transfer that fits, and its `next` names the first one left out.
 */

export const MAX_TRANSFER_PAGE_BYTES = 256 * 1024;

export function transferPageBody(page: TransferPage): Buffer {
  return encodeWithin(page, MAX_TRANSFER_PAGE_BYTES);
}

function encodeWithin(page: TransferPage, maxBytes: number): Buffer {
  const frame = (next: number | null) => JSON.stringify({ ...page, next, transfers: [] });
  // The frame with the longest `next` it can carry, then each transfer and its comma, serialized
  // once and only while it fits: a page cut at half its transfers serializes half of them.
  let bytes = Buffer.byteLength(frame(Number.MAX_SAFE_INTEGER));
  const parts: string[] = [];
  for (const transfer of page.transfers) {
    const part = JSON.stringify(transfer);
    bytes += Buffer.byteLength(part) + 1;
    if (bytes > maxBytes) break;
    parts.push(part);
  }
  const next = parts.length === page.transfers.length ? page.next : page.transfers[parts.length]!.index;
  return Buffer.from(frame(next).replace('"transfers":[]', `"transfers":[${parts.join(',')}]`));
}
