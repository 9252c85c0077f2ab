import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import type { TransferRange } from '../../src/chain/client/read/read-transfers.js';
import { MAX_TRANSFER_PAGE_BYTES } from '../../src/http/transfer-page-body.js';
import { MAX_CACHED_TRANSFER_READS, MAX_TRANSFER_READS_IN_FLIGHT } from '../../src/transfers/shared-reads.js';
import { createTransferQueries, MAX_TRANSFER_PAGE } from '../../src/transfers/transfer-queries.js';
import { everyoneVotedRange } from '../machines/support/bridge-view.js';
import { rawRequest, startTestApp, type TestApp } from '../support/http-app.js';
import { captureLogs } from '../support/log-capture.js';

/**
 * Issue 33, item 6: under a /transfers load the server's RSS grew a step each second, as each
 * expired read's decoded entries, views and page lived on in the cache beside its encoded body.
 * What GET /transfers keeps between requests is at most MAX_CACHED_TRANSFER_READS encoded bodies
 * of at most MAX_TRANSFER_PAGE_BYTES each (docs/http-api.md, "HTTP limits"): measured here on the
 * heap after a full collection, with the largest pages there are, and every range read found
 * collected.
 */

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** The documented bound on what GET /transfers retains. */
const RETAINED_BOUND = MAX_CACHED_TRANSFER_READS * MAX_TRANSFER_PAGE_BYTES;
/** What else the process allocates and keeps between the two measurements (compiled code, fastify's request pools). */
const MEASUREMENT_SLACK = 1024 * 1024;

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** Heap and off-heap bytes in use after full collections; a turn first so that WeakRefs read in this job can be cleared. */
async function liveBytes(): Promise<number> {
  await new Promise((resolve) => setImmediate(resolve));
  collectGarbage();
  collectGarbage();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

describe('what GET /transfers retains', () => {
  it(`at most ${MAX_CACHED_TRANSFER_READS} encoded pages of ${MAX_TRANSFER_PAGE_BYTES} bytes after ${4 * MAX_CACHED_TRANSFER_READS} distinct largest pages; no range read kept`, async () => {
    const ranges: WeakRef<TransferRange>[] = [];
    const read = async (from: number, limit: number) => {
      const range = everyoneVotedRange(limit, from);
      ranges.push(new WeakRef(range));
      return range;
    };
    // Unpaced: what is retained is the point here, and 128 reads at the production pace take 64 s.
    app = await startTestApp({ transfers: createTransferQueries(read), logs: captureLogs('error'), transferReadsPerSecond: 1_000 });
    const port = app.port;
    const pages = async (limit: number) => {
      for (let batch = 0; batch < 4 * MAX_CACHED_TRANSFER_READS; batch += MAX_TRANSFER_READS_IN_FLIGHT) {
        const paths = Array.from({ length: MAX_TRANSFER_READS_IN_FLIGHT }, (_, i) => `/transfers?from=${batch + i}&limit=${limit}`);
        const answers = await Promise.all(paths.map((path) => rawRequest(port, { method: 'GET', path })));
        expect(answers.map((answer) => answer.status)).toEqual(paths.map(() => 200));
      }
    };
    // The same requests with one-transfer pages first: the code is compiled and fastify's pools
    // filled, and the cache is full of small pages, so what grows after is the pages' size.
    await pages(1);
    const before = await liveBytes();
    await pages(MAX_TRANSFER_PAGE);
    const retained = (await liveBytes()) - before;

    expect(ranges).toHaveLength(2 * 4 * MAX_CACHED_TRANSFER_READS);
    expect(ranges.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
    expect(retained).toBeLessThanOrEqual(RETAINED_BOUND + MEASUREMENT_SLACK);
  });
});
