import { expect } from 'vitest';
import { serverEnv } from '../../../devnet/server-env.js';
import { METRICS_RENDER_MAX_AGE_MS } from '../../../src/http/metrics-render.js';
import type { CrankReport } from '../../../src/machines/crank-types.js';
import { sleep } from '../../../src/time.js';
import { ServerProcess } from '../../support/server-process.js';
import type { DevnetBridge } from './devnet-bridge.js';

/** A built server (`dist/index.js`) signing as authority 0 of the bridge's world. */
export interface AuthorityServer {
  process: ServerProcess;
  url: string;
}

/** Starts it with the devnet's environment, a 5 s RPC timeout, info logs and `env` on top; stopped with the bridge. */
export async function startAuthorityServer(b: DevnetBridge, env: Record<string, string>): Promise<AuthorityServer> {
  const process = new ServerProcess({ ...serverEnv(b.world, 0, 0), BRIDGE_RPC_TIMEOUT_MS: '5000', BRIDGE_LOG_LEVEL: 'info', ...env });
  b.onClose(() => process.stop());
  return { process, url: await process.listening() };
}

const lastScrapeAt = new WeakMap<AuthorityServer, number>();

/**
 * One sample of the server's /metrics by its full series name (`name{label="v"}`); undefined when
 * absent. The server renders /metrics at most once per METRICS_RENDER_MAX_AGE_MS: a scrape
 * within that time of this helper's previous one waits it out, so that it reads a render that
 * started after the call, never the previous scrape's text.
 */
export async function scrapedSample(server: AuthorityServer, series: string): Promise<number | undefined> {
  const waitMs = (lastScrapeAt.get(server) ?? -Infinity) + METRICS_RENDER_MAX_AGE_MS - performance.now();
  if (waitMs > 0) await sleep(waitMs, AbortSignal.timeout(10_000));
  const text = await (await fetch(`${server.url}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  // Once the answer is here: the render it came from started before this moment.
  lastScrapeAt.set(server, performance.now());
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** What /health answers: its HTTP status, the overall status and the crank's role and last error. */
export interface ServerHealth {
  code: number;
  status: string;
  role: string;
  roleSince: number | null;
  lastError: string | null;
}

export async function serverHealth(server: AuthorityServer): Promise<ServerHealth> {
  const response = await fetch(`${server.url}/health`, { signal: AbortSignal.timeout(10_000) });
  const body = (await response.json()) as { status: string; crank: { role: string; role_since: number | null; last_error: string | null } };
  return { code: response.status, status: body.status, role: body.crank.role, roleSince: body.crank.role_since, lastError: body.crank.last_error };
}

/** Signatures of the transactions the server logged as landed (of `action` only, when given). */
export function landedSignatures(server: AuthorityServer, action?: string): string[] {
  return server.process
    .logs()
    .filter((record) => record['outcome'] === 'landed' && (action === undefined || record['action'] === action))
    .flatMap((record) => record['signatures'] as string[]);
}

/** One cycle through POST /crank/once (answered 200), waiting at most `timeoutMs` for its report. */
export async function crankOnce(url: string, timeoutMs = 20_000): Promise<CrankReport> {
  const response = await fetch(`${url}/crank/once`, { method: 'POST', signal: AbortSignal.timeout(timeoutMs) });
  expect(response.status).toBe(200);
  return (await response.json()) as CrankReport;
}
