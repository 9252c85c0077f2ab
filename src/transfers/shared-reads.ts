import { BridgeError } from '../errors.js';
import { sleep } from '../time.js';

/**
 * Answers shared between GET /transfers requests, so that request count turns into neither RPC
 * load nor memory (one read is 2 header reads, then the entry slices of both trackers, then the
 * answer built from them):
 * - concurrent requests for the same key (a range, a transfer) join the one read in flight;
 * - a finished read answers the same key for TRANSFER_CACHE_MS: one view of the chain, at most
 *   that old, about 2 to 3 slots;
 * - reads begin at least 1000 / TRANSFER_READS_PER_SECOND ms apart, whatever their keys: a
 *   flood of ever new ranges got 100 answers a second from the pace (src/http/transfer-pace.ts),
 *   each its own read, and multiplied the server's RPC calls about 14 times (240-260 a second). A read
 *   that may not begin yet waits for its turn (reserved when it is started, so at most
 *   MAX_TRANSFER_READS_IN_FLIGHT x 1000 / TRANSFER_READS_PER_SECOND ms away), and requests for its
 *   key join it meanwhile;
 * - at most MAX_TRANSFER_READS_IN_FLIGHT distinct reads are started (waiting or running) at
 *   once; a request that would start another is refused with TRANSFER__BUSY (HTTP 503 with
 *   Retry-After).
 * So GET /transfers costs the RPC endpoints at most TRANSFER_READS_PER_SECOND reads a second,
 * each at most READ_REQUESTS_PER_READ requests when every request is answered the first time
 * (each retried as src/chain/rpc/read-retry.ts allows): 2 x 6 = 12 requests a second, whatever
 * the number of requests or keys. What is kept between requests is the
 * answer itself, at most MAX_CACHED_TRANSFER_READS of them: the HTTP layer shares encoded
 * bodies, so the decoded entries and views of a read are garbage as soon as it is encoded (kept,
 * they lived for a second each, long enough to be promoted, and the old space grew into them
 * under load). A read whose every requester has gone is aborted, so a stalled RPC holds no
 * upstream socket for nobody.
 */

/** Distinct reads begun per second at most: the RPC cost of GET /transfers is this x READ_REQUESTS_PER_READ. */
export const TRANSFER_READS_PER_SECOND = 2;
/**
 * Requests of one read of the largest page (MAX_TRANSFERS_PER_READ = 500 transfers): a header
 * of each tracker, and each tracker's entries in 64 KiB slices (500 x 160 and 500 x 144 bytes:
 * 2 slices each).
 */
export const READ_REQUESTS_PER_READ = 6;
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

export interface SharedReadOptions {
  /** TRANSFER_READS_PER_SECOND unless a test sets another: one measuring what many reads retain needs more than the pace allows in its time. */
  readsPerSecond?: number;
  now?: () => number;
}

export function shareReads<T>({ readsPerSecond = TRANSFER_READS_PER_SECOND, now = Date.now }: SharedReadOptions = {}): SharedRead<T> {
  const inFlight = new Map<string, InFlight<T>>();
  const cache = new Map<string, Cached<T>>();
  const spacingMs = 1000 / readsPerSecond;
  let nextStartAt = Number.NEGATIVE_INFINITY;

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
    const arrived = now();
    const startAt = Math.max(arrived, nextStartAt);
    nextStartAt = startAt + spacingMs;
    const begun = startAt > arrived ? sleep(startAt - arrived, controller.signal).then(() => read(controller.signal)) : read(controller.signal);
    const result = begun.then((answer) => {
      remember(key, answer, startAt);
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
  return new BridgeError('TRANSFER__BUSY', { inFlight, limit: MAX_TRANSFER_READS_IN_FLIGHT });
}
