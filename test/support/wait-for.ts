/**
 * Polls `condition` until it holds, every `intervalMs`, for at most `timeoutMs`; then fails
 * naming `what`. For waits on the crank's own timers (backlog cycles, retry backoff), where
 * driving a cycle by hand would defeat the point of the test.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  options: { timeoutMs: number; what: string; intervalMs?: number },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() >= deadline) throw new Error(`waited ${options.timeoutMs} ms for ${options.what}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 20));
  }
}
