import { Keypair, type PublicKey } from '@solana/web3.js';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  MAX_TRANSFERS_PER_READ,
  readTransferRange,
  TRANSFERS_DECODED_PER_TURN,
  type TransferRangeContext,
} from '../../src/chain/client/read/read-transfers.js';
import type { ChainRpc } from '../../src/chain/rpc/chain-rpc.js';
import { encodeDepositEntry, encodeTrackerHeader, encodeWithdrawEntry } from '../../src/chain/codec/accounts.js';
import type { TrackerKind } from '../../src/chain/types.js';
import { MAX_TRANSFER_PAGE_BYTES, TRANSFERS_ENCODED_PER_TURN, transferPageBody } from '../../src/http/transfer-page-body.js';
import { MAX_TRANSFER_READS_IN_FLIGHT } from '../../src/transfers/shared-reads.js';
import { createTransferQueries, transferPage, VIEWS_PER_TURN } from '../../src/transfers/transfer-queries.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { everyoneVotedRange, trackerHeader } from '../machines/support/bridge-view.js';
import { rawRequest, startTestApp, type TestApp } from '../support/http-app.js';
import { captureLogs } from '../support/log-capture.js';

/**
 * Issue 33, item 6: decoding a 500-transfer read, building its views and encoding its page ran
 * in one piece, and under a GET /transfers load the event loop was held 50 to 200 ms at a time in
 * front of /health. Each stage now works in bounded chunks with a turn of the event loop between
 * them. Checked by structure (the turns a stage gives the loop, counted by a setImmediate ticker,
 * which no synchronous stage gives at all) and, end to end, by /health answering while the
 * largest reads are decoded and encoded, within a bound generous enough for a loaded machine.
 */

/** Transfers on both trackers: MAX_TRANSFER_READS_IN_FLIGHT distinct ranges of the largest read. */
const TRANSFERS = MAX_TRANSFER_READS_IN_FLIGHT * MAX_TRANSFERS_PER_READ;
/** The longest a /health probe may wait while the reads run: far above the few ms a chunk takes, far below the 50-200 ms one piece took loaded. */
const HEALTH_BOUND_MS = 250;
/** Probes answered one after another while the reads run: 12 to 16 measured with the work in chunks, 1 without. */
const MIN_PROBES_BETWEEN_CHUNKS = 4;
/** Transfers naming one voter per chain, about 1 KB each: a page of them fits MAX_TRANSFER_PAGE_BYTES whole. */
const WHOLE_PAGE = 200;
const ONE_VOTER = 0b1;

const signal = () => new AbortController().signal;

/** Turns of the event loop (setImmediate callbacks of a ticker) that pass while `work` runs. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns += 1;
    setImmediate(tick);
  };
  setImmediate(tick);
  try {
    return { result: await work(), turns };
  } finally {
    running = false;
  }
}

/** The tracker account bytes of both chains holding `TRANSFERS` transfers, everyone voting on each (the largest entries there are). */
function trackerAccounts(): Record<TrackerKind, Uint8Array> {
  const range = everyoneVotedRange(TRANSFERS);
  const account = (kind: TrackerKind, entries: Uint8Array[]) => {
    const authorities = range.sourceHeader.authorities;
    const header = { ...trackerHeader(kind, { entryCount: TRANSFERS, ownNext: 0, authorities }), capacity: BigInt(TRANSFERS) };
    return Buffer.concat([encodeTrackerHeader(header), ...entries]);
  };
  return {
    DepositTracker: account(
      'DepositTracker',
      range.deposits.map((deposit) => encodeDepositEntry(deposit)),
    ),
    WithdrawTracker: account(
      'WithdrawTracker',
      range.withdrawals.map((withdrawal) => encodeWithdrawEntry(withdrawal!)),
    ),
  };
}

/**
 * readTransferRange's context over an in-memory node: each getAccountInfo slice answers at once
 * (a resolved promise, no I/O), so that every turn the loop gets during a read is one the read
 * gave. Any other RPC method is a test error.
 */
function inMemoryChains(): TransferRangeContext {
  const accounts = trackerAccounts();
  const programId = Keypair.generate().publicKey;
  const endpoint = (chain: 'source' | 'target', kind: TrackerKind) => {
    const address = Keypair.generate().publicKey;
    const rpc = {
      chain,
      getAccountInfo: async (_address: PublicKey, { dataSlice }: { dataSlice?: { offset: number; length: number } }) => {
        const data = accounts[kind].subarray(dataSlice?.offset ?? 0, (dataSlice?.offset ?? 0) + (dataSlice?.length ?? accounts[kind].length));
        return { slot: 5_000, account: { owner: programId, lamports: 1, data } };
      },
    } as Partial<ChainRpc> as ChainRpc;
    const tracker = { chain, kind, address, account: address.toBase58(), programId, sourceChainId: 1, targetChainId: 2 };
    return { rpc, tracker };
  };
  return { source: endpoint('source', 'DepositTracker'), target: endpoint('target', 'WithdrawTracker'), metrics: createMetrics(new Registry()) };
}

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('GET /transfers works in chunks with turns of the event loop between them', () => {
  it(`decoding a read of ${MAX_TRANSFERS_PER_READ} transfers gives the loop a turn every ${TRANSFERS_DECODED_PER_TURN}`, async () => {
    const chains = inMemoryChains();
    const { result: range, turns } = await turnsDuring(() => readTransferRange(chains, 0, MAX_TRANSFERS_PER_READ, signal()));
    expect(range.deposits).toHaveLength(MAX_TRANSFERS_PER_READ);
    expect(range.withdrawals.every((withdrawal) => withdrawal?.yesVotes === 0xffff)).toBe(true);
    expect(turns).toBeGreaterThanOrEqual(Math.ceil(MAX_TRANSFERS_PER_READ / TRANSFERS_DECODED_PER_TURN) - 1);
  });

  it('decoding stops at the next turn once the read is abandoned', async () => {
    const controller = new AbortController();
    const read = readTransferRange(inMemoryChains(), 0, MAX_TRANSFERS_PER_READ, controller.signal);
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort(new Error('every requester left'));
    await expect(read).rejects.toThrow('every requester left');
  });

  it(`building the views of a page gives the loop a turn every ${VIEWS_PER_TURN}`, async () => {
    const range = everyoneVotedRange(MAX_TRANSFERS_PER_READ);
    const { result: page, turns } = await turnsDuring(() => transferPage(range, 0, MAX_TRANSFERS_PER_READ, signal()));
    expect(page.transfers.map((transfer) => transfer.index)).toEqual(range.deposits.map((_, offset) => offset));
    expect(turns).toBeGreaterThanOrEqual(Math.ceil(MAX_TRANSFERS_PER_READ / VIEWS_PER_TURN) - 1);
  });

  it(`encoding a page gives the loop a turn every ${TRANSFERS_ENCODED_PER_TURN} transfers, and the chunks join into the page's JSON`, async () => {
    const range = everyoneVotedRange(WHOLE_PAGE);
    const oneVoter = {
      ...range,
      deposits: range.deposits.map((deposit) => ({ ...deposit, yesVotes: ONE_VOTER })),
      withdrawals: range.withdrawals.map((withdrawal) => withdrawal && { ...withdrawal, yesVotes: ONE_VOTER }),
    };
    const page = { ...(await transferPage(oneVoter, 0, WHOLE_PAGE, signal())), flow_held: null };
    expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThanOrEqual(MAX_TRANSFER_PAGE_BYTES);
    const { result: body, turns } = await turnsDuring(() => transferPageBody(page, signal()));
    expect(body.toString()).toBe(JSON.stringify(page));
    expect(turns).toBeGreaterThanOrEqual(Math.ceil(WHOLE_PAGE / TRANSFERS_ENCODED_PER_TURN) - 1);
  });

  it(`/health answers between the chunks, each probe within ${HEALTH_BOUND_MS} ms, while ${MAX_TRANSFER_READS_IN_FLIGHT} reads of ${MAX_TRANSFERS_PER_READ} transfers are decoded and encoded`, async () => {
    const chains = inMemoryChains();
    // Unpaced, so that all 4 reads run at once: the worst case in flight (reads slower than the pace's 2 s overlap so too).
    app = await startTestApp({
      transfers: createTransferQueries((from, limit, readSignal) => readTransferRange(chains, from, limit, readSignal)),
      logs: captureLogs('error'),
      transferReadsPerSecond: 1_000,
    });
    const port = app.port;
    const pages = Array.from({ length: MAX_TRANSFER_READS_IN_FLIGHT }, (_, i) =>
      rawRequest(port, { method: 'GET', path: `/transfers?from=${i * MAX_TRANSFERS_PER_READ}&limit=${MAX_TRANSFERS_PER_READ}` }),
    );
    let pending = true;
    const all = Promise.all(pages).finally(() => {
      pending = false;
    });
    const probes: number[] = [];
    while (pending) {
      const began = performance.now();
      const health = await rawRequest(port, { method: 'GET', path: '/health' });
      expect(health.status).toBe(200);
      probes.push(performance.now() - began);
    }
    const answers = await all;
    expect(answers.map((answer) => answer.status)).toEqual(pages.map(() => 200));
    // In one piece, the 4 reads ran back to back and one probe waited for all of them (about 100 ms here); in chunks, probes are answered between them.
    expect(probes.length).toBeGreaterThanOrEqual(MIN_PROBES_BETWEEN_CHUNKS);
    expect(Math.max(...probes)).toBeLessThan(HEALTH_BOUND_MS);
  });
});
