import { describe, expect, it } from 'vitest';
import type { TransferRange } from '../../src/chain/client/read/read-transfers.js';
import { isBridgeError } from '../../src/errors.js';
import { MAX_TRANSFER_READS_IN_FLIGHT, shareReads, TRANSFER_CACHE_MS, TRANSFER_READS_PER_SECOND } from '../../src/transfers/shared-reads.js';
import { rejection } from '../support/rejection.js';
import { trackerHeader } from '../machines/support/bridge-view.js';

/**
 * The reads behind GET /transfers, shared: a range reader the test holds open counts the reads
 * that reach it. The clock is the test's (`now`), since only the cache's age matters here.
 */

function range(start: number): TransferRange {
  return {
    sourceHeader: trackerHeader('DepositTracker', { entryCount: 0, ownNext: 0 }),
    targetHeader: trackerHeader('WithdrawTracker', { entryCount: 0, ownNext: 0 }),
    start,
    deposits: [],
    withdrawals: [],
    slots: { source: 0, target: 0 },
  };
}

interface HeldRead {
  /** When the read began (performance.now()). */
  at: number;
  from: number;
  limit: number;
  signal: AbortSignal;
  resolve(range: TransferRange): void;
  reject(err: Error): void;
}

function heldReader() {
  const reads: HeldRead[] = [];
  const read = (from: number, limit: number, signal: AbortSignal) =>
    new Promise<TransferRange>((resolve, reject) => {
      reads.push({ at: performance.now(), from, limit, signal, resolve, reject });
    });
  return { reads, read };
}

const never = () => new AbortController().signal;

type RangeReader = (from: number, limit: number, signal: AbortSignal) => Promise<TransferRange>;

/** Shared reads keyed by range, as GET /transfers keys its pages. */
function shareTransferReads(read: RangeReader, now?: () => number): RangeReader {
  const shared = shareReads<TransferRange>(now === undefined ? {} : { now });
  return (from, limit, signal) => shared(`${from}:${limit}`, (readSignal) => read(from, limit, readSignal), signal);
}

describe('shareReads', () => {
  it('concurrent requests for one range join one read and all get its answer', async () => {
    const { reads, read } = heldReader();
    const shared = shareTransferReads(read);
    const answers = Array.from({ length: 200 }, () => shared(0, 500, never()));
    expect(reads).toHaveLength(1);
    reads[0]!.resolve(range(0));
    expect(new Set(await Promise.all(answers)).size).toBe(1);
  });

  it(`serves a finished read for ${TRANSFER_CACHE_MS} ms, then reads again`, async () => {
    const { reads, read } = heldReader();
    let now = 1_000_000;
    const shared = shareTransferReads(read, () => now);
    const first = shared(0, 50, never());
    reads[0]!.resolve(range(0));
    const answer = await first;
    now += TRANSFER_CACHE_MS - 1;
    expect(await shared(0, 50, never())).toBe(answer);
    expect(reads).toHaveLength(1);
    now += 1;
    const again = shared(0, 50, never());
    expect(reads).toHaveLength(2);
    reads[1]!.resolve(range(0));
    expect(await again).not.toBe(answer);
  });

  it(`refuses a ${MAX_TRANSFER_READS_IN_FLIGHT + 1}th distinct read in flight with TRANSFER__BUSY; a joining request still joins`, async () => {
    const { reads, read } = heldReader();
    const shared = shareTransferReads(read);
    const running = Array.from({ length: MAX_TRANSFER_READS_IN_FLIGHT }, (_, from) => shared(from, 10, never()));
    const refused = await rejection(shared(99, 10, never()));
    expect(isBridgeError(refused, 'TRANSFER__BUSY')).toBe(true);
    expect((refused as Error).message).toBe(
      `${MAX_TRANSFER_READS_IN_FLIGHT} different transfer reads are already running (at most ${MAX_TRANSFER_READS_IN_FLIGHT}); retry shortly, or ask for a range already being read`,
    );
    const joined = shared(0, 10, never());
    // Started at once, begun one turn apart.
    await expect.poll(() => reads.length, { timeout: 5_000 }).toBe(MAX_TRANSFER_READS_IN_FLIGHT);
    for (const held of reads) held.resolve(range(held.from));
    await Promise.all([...running, joined]);
    // Slots are free again.
    void shared(99, 10, never());
    await expect.poll(() => reads.length, { timeout: 5_000 }).toBe(MAX_TRANSFER_READS_IN_FLIGHT + 1);
  });

  it('a failed read is not remembered: the next request reads again', async () => {
    const { reads, read } = heldReader();
    const shared = shareTransferReads(read);
    const first = shared(0, 10, never());
    reads[0]!.reject(new Error('rpc down'));
    expect(await rejection(first)).toEqual(new Error('rpc down'));
    void shared(0, 10, never());
    await expect.poll(() => reads.length, { timeout: 5_000 }).toBe(2);
  });

  it('a requester that leaves gets its abort; the read is aborted once nobody waits, and the next request starts anew', async () => {
    const { reads, read } = heldReader();
    const shared = shareTransferReads(read);
    const leaving = [new AbortController(), new AbortController()];
    const answers = leaving.map((controller) => shared(0, 10, controller.signal));
    leaving[0]!.abort(new Error('client gone'));
    expect(await rejection(answers[0]!)).toEqual(new Error('client gone'));
    expect(reads[0]!.signal.aborted).toBe(false);
    leaving[1]!.abort(new Error('client gone too'));
    expect(await rejection(answers[1]!)).toEqual(new Error('client gone too'));
    expect(reads[0]!.signal.aborted).toBe(true);
    const next = shared(0, 10, never());
    await expect.poll(() => reads.length, { timeout: 5_000 }).toBe(2);
    reads[1]!.resolve(range(0));
    expect((await next).start).toBe(0);
  });

  it(`reads of distinct keys begin at least ${1000 / TRANSFER_READS_PER_SECOND} ms apart; a request for a read waiting its turn joins it`, async () => {
    const { reads, read } = heldReader();
    const shared = shareTransferReads(read);
    const asked = performance.now();
    const answers = [0, 1, 2].map((from) => shared(from, 10, never()));
    const joined = shared(2, 10, never());
    expect(reads).toHaveLength(1);
    await expect.poll(() => reads.length, { timeout: 5_000 }).toBe(3);
    const spacing = 1000 / TRANSFER_READS_PER_SECOND;
    // Timers never fire early; a millisecond of slack for the clock's rounding.
    expect(reads[1]!.at - asked).toBeGreaterThanOrEqual(spacing - 1);
    expect(reads[2]!.at - asked).toBeGreaterThanOrEqual(2 * spacing - 1);
    for (const held of reads) held.resolve(range(held.from));
    const [, , third] = await Promise.all(answers);
    expect(await joined).toBe(third);
  });

  it('a read whose requesters all left while it waited its turn never begins', async () => {
    const { reads, read } = heldReader();
    const shared = shareTransferReads(read);
    void shared(0, 10, never());
    const leaving = new AbortController();
    const waiting = shared(1, 10, leaving.signal);
    leaving.abort(new Error('client gone'));
    expect(await rejection(waiting)).toEqual(new Error('client gone'));
    await new Promise((resolve) => setTimeout(resolve, 1000 / TRANSFER_READS_PER_SECOND + 100));
    expect(reads.map((held) => held.from)).toEqual([0]);
  });
});
