/**
 * Timers that hold any delay. Node stores a timer's delay in a signed 32-bit integer: a delay
 * above 2^31-1 ms (about 24.8 days) fires after 1 ms with a TimeoutOverflowWarning. Configured
 * delays (BRIDGE_POLL_INTERVAL_SECS, backoffs, deadlines) go through these helpers, which chain
 * timers of at most that length instead. Timers are unref()'d: a pending delay never keeps the
 * process alive on its own.
 */

/** The largest delay a single Node timer holds. */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

export interface LongTimeout {
  clear(): void;
}

/** Like setTimeout, for any finite delay >= 0, never early. */
export function setLongTimeout(callback: () => void, delayMs: number): LongTimeout {
  checkDelay(delayMs);
  let remainingMs = delayMs;
  let timer: NodeJS.Timeout;

  function arm(): void {
    const stepMs = Math.min(remainingMs, MAX_TIMER_DELAY_MS);
    remainingMs -= stepMs;
    timer = setTimeout(remainingMs > 0 ? arm : callback, stepMs);
    timer.unref();
  }

  arm();
  return { clear: () => clearTimeout(timer) };
}

/** Resolves after `delayMs`; rejects with `signal.reason` as soon as `signal` aborts. */
export function sleep(delayMs: number, signal: AbortSignal): Promise<void> {
  checkDelay(delayMs);
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const timeout = setLongTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);

    function onAbort(): void {
      timeout.clear();
      reject(signal.reason);
    }

    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function checkDelay(delayMs: number): void {
  if (!Number.isFinite(delayMs) || delayMs < 0) {
    throw new RangeError(`timer delay must be a finite number of milliseconds >= 0, got ${delayMs}`);
  }
}

/**
 * Resolves on a later turn of the event loop, after the I/O that is ready now (setImmediate),
 * then rejects with `signal.reason` if the signal aborted meanwhile. Long synchronous work
 * (decoding and encoding a /transfers page) awaits it between bounded chunks, so that a
 * request arriving meanwhile (a /health probe) waits for one chunk, not for the whole work.
 */
export async function nextTurn(signal: AbortSignal): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  signal.throwIfAborted();
}
