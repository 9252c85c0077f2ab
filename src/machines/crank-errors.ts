import { BridgeError, type BridgeErrorWords } from '../errors.js';

/** The errors the running crank answers a request with (HTTP 503 `crank_stopped`, `crank_busy`). */

/**
 * Requests that may wait for a cycle at once. Every waiting request is answered by the same next
 * cycle, so more waiting adds nothing but memory: beyond this a request is refused (HTTP 503).
 */
export const MAX_WAITING_CRANK_REQUESTS = 64;

export function stoppedError(why: BridgeErrorWords['CRANK__STOPPED']): BridgeError<'CRANK__STOPPED'> {
  return new BridgeError('CRANK__STOPPED', {}, why);
}

export function busyError(waiting: number): BridgeError<'CRANK__BUSY'> {
  return new BridgeError('CRANK__BUSY', { waiting, limit: MAX_WAITING_CRANK_REQUESTS });
}
