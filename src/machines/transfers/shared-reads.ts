import { TRANSFER_READ_COMMITMENT, type TransferRange } from '../../chain/client/read-transfers.js';
import { BridgeError } from '../../errors.js';
import type { ReadTransferRange } from './transfer-queries.js';

/**
 * Transfer reads shared between GET /transfers requests, so that request count does not turn
 * into RPC load (one read is 2 header reads, then the entry slices of both trackers):
 * - concurrent requests for the same range join the one read in flight;
 * - a finished read answers the same range for TRANSFER_CACHE_MS: one view of the chain
 *   (both headers and the entries read at their slots, at TRANSFER_READ_COMMITMENT), at most
 *   that old, about 2 to 3 slots;
 * - at most MAX_TRANSFER_READS_IN_FLIGHT distinct reads run at once; a request that would
 *   start another is refused with TRANSFER__BUSY (HTTP 503 with Retry-After).
 * So the RPC calls of GET /transfers in flight are at most MAX_TRANSFER_READS_IN_FLIGHT times
 * those of one read, whatever the number of requests, and memory holds at most
 * MAX_TRANSFER_READS_IN_FLIGHT + MAX_CACHED_TRANSFER_READS ranges of at most
 * MAX_TRANSFERS_PER_READ transfers each. A read whose every requester has gone is aborted, so a
 * stalled RPC holds no upstream socket for nobody.
 */

export const MAX_TRANSFER_READS_IN_FLIGHT = 4;
export const TRANSFER_CACHE_MS = 1_000;
const MAX_CACHED_TRANSFER_READS = 16;

interface InFlight {
  result: Promise<TransferRange>;
  waiting: number;
  /** Aborts the read and lets the next request for its range start a new one. */
  abandon(reason: unknown): void;
}

interface Cached {
  range: TransferRange;
  readAt: number;
}

export function shareTransferReads(read: ReadTransferRange, now: () => number = Date.now): ReadTransferRange {
  const inFlight = new Map<string, InFlight>();
  const cache = new Map<string, Cached>();

  function cached(key: string): TransferRange | undefined {
    const entry = cache.get(key);
    if (entry !== undefined && now() - entry.readAt < TRANSFER_CACHE_MS) return entry.range;
    cache.delete(key);
    return undefined;
  }

  function remember(key: string, range: TransferRange, readAt: number): void {
    cache.delete(key);
    cache.set(key, { range, readAt });
    // Map order is insertion order: the first key is the oldest read.
    for (const oldest of cache.keys()) {
      if (cache.size <= MAX_CACHED_TRANSFER_READS) break;
      cache.delete(oldest);
    }
  }

  function start(key: string, from: number, limit: number): InFlight {
    if (inFlight.size >= MAX_TRANSFER_READS_IN_FLIGHT) throw transfersBusy(inFlight.size);
    const controller = new AbortController();
    const startedAt = now();
    const result = read(from, limit, controller.signal).then((range) => {
      remember(key, range, startedAt);
      return range;
    });
    const settle = () => {
      if (inFlight.get(key) === entry) inFlight.delete(key);
    };
    const entry: InFlight = {
      result,
      waiting: 0,
      abandon: (reason) => {
        settle();
        controller.abort(reason);
      },
    };
    inFlight.set(key, entry);
    result.then(settle, settle);
    return entry;
  }

  return async (from, limit, signal) => {
    signal.throwIfAborted();
    const key = `${TRANSFER_READ_COMMITMENT}:${from}:${limit}`;
    const hit = cached(key);
    if (hit !== undefined) return hit;
    return join(inFlight.get(key) ?? start(key, from, limit), signal);
  };
}

/** The shared read's result for one requester; leaving (its signal aborts) aborts the read once nobody waits. */
function join(entry: InFlight, signal: AbortSignal): Promise<TransferRange> {
  entry.waiting += 1;
  return new Promise<TransferRange>((resolve, reject) => {
    const leave = () => {
      entry.waiting -= 1;
      if (entry.waiting === 0) entry.abandon(signal.reason);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', leave, { once: true });
    entry.result.then(
      (range) => {
        signal.removeEventListener('abort', leave);
        resolve(range);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', leave);
        reject(err as Error);
      },
    );
  });
}

function transfersBusy(inFlight: number): BridgeError<'TRANSFER__BUSY'> {
  return new BridgeError(
    'TRANSFER__BUSY',
    { inFlight, limit: MAX_TRANSFER_READS_IN_FLIGHT },
    `${inFlight} different transfer reads are already running (at most ${MAX_TRANSFER_READS_IN_FLIGHT}); retry shortly, or ask for a range already being read`,
  );
}
