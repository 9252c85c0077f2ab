/**
 * Runs `task` over `items` with at most `limit` in flight, keeping the order of results.
 * The first failure aborts the tasks still running (through the signal they receive) and is
 * the one rethrown, so a failed read does not leave its sibling requests running.
 */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal,
  task: (item: T, signal: AbortSignal) => Promise<R>,
): Promise<R[]> {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  const results = new Array<R>(items.length);
  let next = 0;

  async function worker(): Promise<void> {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T, controller.signal);
    }
  }

  try {
    signal.throwIfAborted();
    const workers = Array.from({ length: Math.min(limit, items.length) }, () =>
      worker().catch((err: unknown) => {
        controller.abort(err);
        throw err;
      }),
    );
    const settled = await Promise.allSettled(workers);
    const failure = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failure !== undefined) throw firstCause(controller.signal, failure.reason);
    return results;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

// Workers stopped by the abort reject with the abort reason; report what caused it.
function firstCause(signal: AbortSignal, fallback: unknown): unknown {
  return signal.aborted ? signal.reason : fallback;
}
