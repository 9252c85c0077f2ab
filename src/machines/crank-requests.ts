import type { CrankReport } from './crank-types.js';

/**
 * The CRANK_ONCE requests waiting for their cycle. Each gets an id that travels through the
 * machine; the machine emits which cycle answered which ids, or which ids it abandoned.
 */

interface Waiter {
  resolve(report: CrankReport): void;
  reject(error: unknown): void;
}

export interface CrankRequests {
  /** A new request: its id for the CRANK_ONCE event and the promise its caller awaits. */
  open(signal?: AbortSignal): { requestId: string; report: Promise<CrankReport> };
  answer(requestIds: readonly string[], report: CrankReport): void;
  reject(requestIds: readonly string[], error: unknown): void;
  rejectAll(error: unknown): void;
  /** Requests still waiting for their answer. */
  size(): number;
}

export function createCrankRequests(): CrankRequests {
  const waiting = new Map<string, Waiter>();
  let sequence = 0;

  function settle(requestId: string, settleWith: (waiter: Waiter) => void): void {
    const waiter = waiting.get(requestId);
    if (waiter === undefined) return;
    waiting.delete(requestId);
    settleWith(waiter);
  }

  return {
    open(signal) {
      sequence += 1;
      const requestId = `crank-once-${sequence}`;
      const report = new Promise<CrankReport>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        // The cycle still runs for an abandoned request; only its answer is dropped.
        const onAbort = () => settle(requestId, (waiter) => waiter.reject(signal?.reason));
        signal?.addEventListener('abort', onAbort, { once: true });
        const forgetSignal = () => signal?.removeEventListener('abort', onAbort);
        waiting.set(requestId, {
          resolve(value) {
            forgetSignal();
            resolve(value);
          },
          reject(error) {
            forgetSignal();
            reject(error);
          },
        });
      });
      return { requestId, report };
    },
    size: () => waiting.size,
    answer(requestIds, report) {
      for (const requestId of requestIds) settle(requestId, (waiter) => waiter.resolve({ ...report }));
    },
    reject(requestIds, error) {
      for (const requestId of requestIds) settle(requestId, (waiter) => waiter.reject(error));
    },
    rejectAll(error) {
      for (const requestId of [...waiting.keys()]) settle(requestId, (waiter) => waiter.reject(error));
    },
  };
}
