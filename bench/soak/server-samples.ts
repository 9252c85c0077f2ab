import type { ChainSide } from '../../src/domain.js';

/**
 * What a bridge server's own /metrics says about it, sampled while a soak runs: resident memory,
 * event-loop delay p99 (prom-client's monitorEventLoopDelay histogram, reset at each scrape), RPC
 * requests and crank cycles so far, and the account bytes of the latest tracker read.
 */

export type PerChain = Record<ChainSide, number>;

export interface ServerSample {
  atMs: number;
  rssBytes: number;
  eventLoopP99Ms: number;
  rpcRequests: PerChain;
  cycles: number;
  /** Account data bytes the latest tracker read fetched, per chain. */
  lastReadAccountBytes: PerChain;
}

const SCRAPE_TIMEOUT_MS = 5_000;

export async function sampleServer(metricsUrl: string, atMs: number): Promise<ServerSample | undefined> {
  try {
    const text = await (await fetch(metricsUrl, { signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS) })).text();
    return {
      atMs,
      rssBytes: sumOf(text, 'process_resident_memory_bytes'),
      eventLoopP99Ms: sumOf(text, 'nodejs_eventloop_lag_p99_seconds') * 1000,
      rpcRequests: perChain(text, 'bridge_rpc_requests_total'),
      cycles: sumOf(text, 'bridge_crank_cycles_total'),
      lastReadAccountBytes: perChain(text, 'bridge_chain_last_read_account_bytes'),
    };
  } catch {
    // A scrape that fails (the server busy past the timeout) is a gap in the samples, reported as such.
    return undefined;
  }
}

function perChain(text: string, name: string): PerChain {
  return { source: sumOf(text, name, 'chain="source"'), target: sumOf(text, name, 'chain="target"') };
}

/** The sum of every series of `name` in a Prometheus text exposition (those whose labels include `label`, if given). */
export function sumOf(text: string, name: string, label?: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || (line[name.length] !== ' ' && line[name.length] !== '{')) continue;
    if (label !== undefined && !line.slice(name.length, line.lastIndexOf(' ')).includes(label)) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum += value;
  }
  return sum;
}

/** Least-squares slope of `y` over `x` (per unit of x); 0 for fewer than two points. */
export function slope(points: readonly { x: number; y: number }[]): number {
  if (points.length < 2) return 0;
  const meanX = points.reduce((sum, point) => sum + point.x, 0) / points.length;
  const meanY = points.reduce((sum, point) => sum + point.y, 0) / points.length;
  const covariance = points.reduce((sum, point) => sum + (point.x - meanX) * (point.y - meanY), 0);
  const variance = points.reduce((sum, point) => sum + (point.x - meanX) ** 2, 0);
  return variance === 0 ? 0 : covariance / variance;
}
