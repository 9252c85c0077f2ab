import { BridgeError } from '../errors.js';

/** The errors the running crank answers a request with (HTTP 503 `crank_stopped`, `crank_busy`). */

/**
 * Requests that may wait for a cycle at once. Every waiting request is answered by the same next
 * cycle, so more waiting adds nothing but memory: beyond this a request is refused (HTTP 503).
 */
export const MAX_WAITING_CRANK_REQUESTS = 64;

export function stoppedError(message: string): BridgeError<'CRANK__STOPPED'> {
  return new BridgeError('CRANK__STOPPED', {}, message);
}

export function busyError(waiting: number): BridgeError<'CRANK__BUSY'> {
  return new BridgeError(
    'CRANK__BUSY',
    { waiting, limit: MAX_WAITING_CRANK_REQUESTS },
    `${waiting} crank requests already wait for the next cycle (at most ${MAX_WAITING_CRANK_REQUESTS}); try again after it, or read /health`,
  );
}
