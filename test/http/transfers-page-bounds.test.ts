import { afterEach, describe, expect, it } from 'vitest';
import { MAX_TRANSFER_PAGE_BYTES, transferPageBody } from '../../src/http/transfer-page-body.js';
import { TRANSFER_CACHE_MS } from '../../src/transfers/shared-reads.js';
import { createTransferQueries, MAX_TRANSFER_PAGE } from '../../src/transfers/transfer-queries.js';
import { everyoneVotedRange } from '../machines/support/bridge-view.js';
import { rawRequest, startTestApp, type TestApp } from '../support/http-app.js';

/**
 * Issue 33, item 6: /transfers answers of about 200 KB each were serialized once per request,
 * and 5,756 requests in 10 s took /health's p50 to 859 ms. A page is encoded once per shared
 * read and is at most MAX_TRANSFER_PAGE_BYTES, however many authorities vote.
 */

/** `MAX_TRANSFER_PAGE` transfers on which all 16 authorities voted yes on both chains: the largest page there is. */
const largestRange = () => everyoneVotedRange(MAX_TRANSFER_PAGE);

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('GET /transfers answers are bounded and built once per read', () => {
  it(`a page over ${MAX_TRANSFER_PAGE_BYTES} bytes is cut after the last transfer that fits; next names the first left out`, async () => {
    const page = {
      ...(await createTransferQueries(async () => largestRange()).page({ from: 0, limit: MAX_TRANSFER_PAGE }, new AbortController().signal)),
      flow_held: null,
    };
    expect(Buffer.byteLength(JSON.stringify(page))).toBeGreaterThan(MAX_TRANSFER_PAGE_BYTES);
    const body = await transferPageBody(page, new AbortController().signal);
    expect(body.length).toBeLessThanOrEqual(MAX_TRANSFER_PAGE_BYTES);
    const cut = JSON.parse(body.toString()) as { transfers: Array<{ index: number }>; next: number; limit: number };
    expect(cut.transfers.length).toBeGreaterThan(0);
    expect(cut.transfers.length).toBeLessThan(MAX_TRANSFER_PAGE);
    expect(cut.next).toBe(cut.transfers.length);
    expect(cut.limit).toBe(MAX_TRANSFER_PAGE);
  });

  it(`200 concurrent requests for one range: one read per ${TRANSFER_CACHE_MS} ms, the same bytes`, async () => {
    let reads = 0;
    const read = async () => {
      reads += 1;
      return largestRange();
    };
    app = await startTestApp({ transfers: createTransferQueries(read), maxConnectionsPerAddress: 200 });
    const port = app.port;
    const began = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 200 }, () => rawRequest(port, { method: 'GET', path: `/transfers?limit=${MAX_TRANSFER_PAGE}` })),
    );
    // The answers are paced (10 ms apart), so they span about 2 s: a read per cache period, and the one that expired.
    expect(reads).toBeLessThanOrEqual(Math.ceil((performance.now() - began) / TRANSFER_CACHE_MS) + 1);
    expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([200]));
    expect(new Set(answers.map((answer) => answer.body)).size).toBe(1);
    expect(answers[0]!.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Buffer.byteLength(answers[0]!.body)).toBeLessThanOrEqual(MAX_TRANSFER_PAGE_BYTES);
  });
});

describe('transferPageBody', () => {
  it('a page within the bound is the page as JSON, byte for byte', async () => {
    const range = { ...largestRange(), deposits: largestRange().deposits.slice(0, 3), withdrawals: largestRange().withdrawals.slice(0, 3) };
    const page = { ...(await createTransferQueries(async () => range).page({ from: 0, limit: 3 }, new AbortController().signal)), flow_held: null };
    expect((await transferPageBody(page, new AbortController().signal)).toString()).toBe(JSON.stringify(page));
  });
});
