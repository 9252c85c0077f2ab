import { expect } from 'vitest';
import { serverEnv } from '../../../devnet/server-env.js';
import type { CrankReport } from '../../../src/machines/crank-types.js';
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

/** One sample of the server's /metrics by its full series name (`name{label="v"}`); undefined when absent. */
export async function scrapedSample(server: AuthorityServer, series: string): Promise<number | undefined> {
  const text = await (await fetch(`${server.url}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
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
