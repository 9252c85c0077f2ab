import { BridgeError } from '../errors.js';

/**
 * Answers shared between GET /transfers requests, so that request count turns into neither RPC
 * load nor memory (one read is 2 header reads, then the entry slices of both trackers, then the
 * answer built from them):
 * - concurrent requests for the same key (a range, a transfer) join the one read in flight;
 * - a finished read answers the same key for TRANSFER_CACHE_MS: one view of the chain, at most
 *   that old, about 2 to 3 slots;
 * - at most MAX_TRANSFER_READS_IN_FLIGHT distinct reads run at once; a request that would
 *   start another is refused with TRANSFER__BUSY (HTTP 503 with Retry-After).
 * So the RPC calls of GET /transfers in flight are at most MAX_TRANSFER_READS_IN_FLIGHT times
 * those of one read, whatever the number of requests. What is kept between requests is the
 * answer itself, at most MAX_CACHED_TRANSFER_READS of them: the HTTP layer shares encoded
 * bodies, so the decoded entries and views of a read are garbage as soon as it is encoded (kept,
 * they lived for a second each, long enough to be promoted, and the old space grew into them
 * under load). A read whose every requester has gone is aborted, so a stalled RPC holds no
 * upstream socket for nobody.
 */

export const MAX_TRANSFER_READS_IN_FLIGHT = 4;
export const TRANSFER_CACHE_MS = 1_000;
export const MAX_CACHED_TRANSFER_READS = 16;

/** The answer for `key`: a cached one, the one in flight, or a new `read`. */
export type SharedRead<T> = (key: string, read: (signal: AbortSignal) => Promise<T>, signal: AbortSignal) => Promise<T>;

interface InFlight<T> {
  result: Promise<T>;
  waiting: number;
  /** Aborts the read and lets the next request for its key start a new one. */
  abandon(reason: unknown): void;
}

interface Cached<T> {
  answer: T;
  readAt: number;
}

export function shareReads<T>(now: () => number = Date.now): SharedRead<T> {
  const inFlight = new Map<string, InFlight<T>>();
  const cache = new Map<string, Cached<T>>();

  function cached(key: string): T | undefined {
    const entry = cache.get(key);
    if (entry !== undefined && now() - entry.readAt < TRANSFER_CACHE_MS) return entry.answer;
    cache.delete(key);
    return undefined;
  }

  function remember(key: string, answer: T, readAt: number): void {
    cache.delete(key);
    cache.set(key, { answer, readAt });
    // Map order is insertion order: the first key is the oldest read.
    for (const oldest of cache.keys()) {
      if (cache.size <= MAX_CACHED_TRANSFER_READS) break;
      cache.delete(oldest);
    }
  }

  function start(key: string, read: (signal: AbortSignal) => Promise<T>): InFlight<T> {
    if (inFlight.size >= MAX_TRANSFER_READS_IN_FLIGHT) throw transfersBusy(inFlight.size);
    const controller = new AbortController();
    const startedAt = now();
    const result = read(controller.signal).then((answer) => {
      remember(key, answer, startedAt);
      return answer;
    });
    const settle = () => {
      if (inFlight.get(key) === entry) inFlight.delete(key);
    };
    const entry: InFlight<T> = {
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

  return async (key, read, signal) => {
    signal.throwIfAborted();
    const hit = cached(key);
    if (hit !== undefined) return hit;
    return join(inFlight.get(key) ?? start(key, read), signal);
  };
}

/** The shared read's result for one requester; leaving (its signal aborts) aborts the read once nobody waits. */
function join<T>(entry: InFlight<T>, signal: AbortSignal): Promise<T> {
  entry.waiting += 1;
  return new Promise<T>((resolve, reject) => {
    const leave = () => {
      entry.waiting -= 1;
      if (entry.waiting === 0) entry.abandon(signal.reason);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', leave, { once: true });
    entry.result.then(
      (answer) => {
        signal.removeEventListener('abort', leave);
        resolve(answer);
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
  );
}
