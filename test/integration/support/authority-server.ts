import { serverEnv } from '../../../devnet/server-env.js';
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
