import type { Registry } from 'prom-client';

/**
 * GET /metrics renders the whole registry (about 58 KB of text, every collector run): unbounded,
 * 7 addresses x 32 keep-alive connections asking again at once kept the event loop rendering,
 * and /health probes waited 1.1 to 3.1 s behind them. So the registry is rendered at most once
 * per METRICS_RENDER_MAX_AGE_MS: a request within that time of the latest render's start gets
 * that render's text (the one in flight, or its result). Scrapers ask every 15 to 60 s, so
 * what they read is at most 1 s older than the moment they asked. A render that fails is not
 * kept: the next request renders again.
 */

export const METRICS_RENDER_MAX_AGE_MS = 1000;

/**
 * Sending the text costs too (42 KiB an answer: 3,150 answers a second of one render still held
 * /health's p99 at 2.3 times its idle one), so answers are paced (transfer-pace.ts): turns
 * 1000 / METRICS_ANSWERS_PER_SECOND ms apart, reserved on arrival. None is refused: at most
 * one request per open connection waits, so a turn is at most MAX_CONNECTIONS /
 * METRICS_ANSWERS_PER_SECOND = 5.1 s away, inside Prometheus' default 10 s scrape timeout.
 */
export const METRICS_ANSWERS_PER_SECOND = 50;

export function createMetricsRender(registry: Registry, now: () => number = () => performance.now()): () => Promise<string> {
  let latest: { text: Promise<string>; startedAtMs: number } | undefined;
  return () => {
    const atMs = now();
    if (latest === undefined || atMs - latest.startedAtMs >= METRICS_RENDER_MAX_AGE_MS) {
      const text = registry.metrics();
      const render = { text, startedAtMs: atMs };
      latest = render;
      text.catch(() => {
        if (latest === render) latest = undefined;
      });
    }
    return latest.text;
  };
}
