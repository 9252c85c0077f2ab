/**
 * GET /transfers from several loopback addresses, each at its connection limit, as a process of
 * its own (the load must not share the prober's event loop): `node --import tsx
 * bench/support/transfers-hammer.ts '<options JSON>'`. Each connection asks again as soon as an
 * answer ends, until `seconds` pass; a refused or failed request waits RETRY_PAUSE_MS. Prints one
 * JSON summary on stdout.
 */
import { Agent, request } from 'node:http';

export interface HammerOptions {
  origin: string;
  addresses: string[];
  connectionsPerAddress: number;
  seconds: number;
  paths: string[];
}

export interface HammerSummary {
  requests: number;
  statuses: Record<string, number>;
  /** Connections refused or reset, requests that failed or timed out. */
  errors: number;
  bytes: number;
}

const RETRY_PAUSE_MS = 50;
const REQUEST_TIMEOUT_MS = 10_000;

async function hammer(options: HammerOptions): Promise<HammerSummary> {
  const deadline = performance.now() + options.seconds * 1000;
  const summary: HammerSummary = { requests: 0, statuses: {}, errors: 0, bytes: 0 };

  const get = (agent: Agent, path: string) =>
    new Promise<void>((resolve) => {
      const failed = () => {
        summary.errors += 1;
        setTimeout(resolve, RETRY_PAUSE_MS);
      };
      const outgoing = request(`${options.origin}${path}`, { agent }, (response) => {
        response.on('data', (chunk: Buffer) => {
          summary.bytes += chunk.length;
        });
        response.on('error', failed);
        response.on('end', () => {
          summary.requests += 1;
          const status = String(response.statusCode);
          summary.statuses[status] = (summary.statuses[status] ?? 0) + 1;
          resolve();
        });
      });
      outgoing.setTimeout(REQUEST_TIMEOUT_MS, () => outgoing.destroy());
      outgoing.on('error', failed);
      outgoing.end();
    });

  const loop = async (agent: Agent, first: number) => {
    for (let i = first; performance.now() < deadline; i++) await get(agent, options.paths[i % options.paths.length]!);
  };

  await Promise.all(
    options.addresses.flatMap((localAddress, a) => {
      const agent = new Agent({ keepAlive: true, maxSockets: options.connectionsPerAddress, localAddress });
      return Array.from({ length: options.connectionsPerAddress }, (_, c) => loop(agent, a + c));
    }),
  );
  return summary;
}

const summary = await hammer(JSON.parse(process.argv[2] ?? '{}') as HammerOptions);
process.stdout.write(JSON.stringify(summary));
process.exit(0);
