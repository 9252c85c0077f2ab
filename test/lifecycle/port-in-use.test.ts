import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { keypairDir } from '../support/keypair-files.js';
import { ServerProcess, ensureBuilt } from '../support/server-process.js';

// Issue 33, item 3: a port in use started the crank first (a cycle ran and was aborted), then
// printed a JSON `fatal` line with a stack trace on stdout, nothing on stderr.

let cleanups: Array<() => void | Promise<void>> = [];

beforeAll(() => {
  ensureBuilt();
}, 120_000);

afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function listening(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => void server.close());
  return (server.address() as AddressInfo).port;
}

/** A JSON-RPC endpoint that counts what reaches it and answers nothing useful. */
async function countingRpc() {
  let requests = 0;
  const server = createServer((request, response) => {
    requests += 1;
    request.resume();
    response.writeHead(500).end();
  });
  const port = await listening(server);
  return { url: `http://127.0.0.1:${port}`, requests: () => requests };
}

async function run(env: Record<string, string>): Promise<ServerProcess> {
  const server = new ServerProcess({ BRIDGE_LOG_LEVEL: 'debug', ...env });
  cleanups.push(() => server.stop());
  expect(await server.exited).toEqual({ code: 1, signal: null });
  return server;
}

describe('a bind address that cannot be bound', () => {
  it('exits 1 with one stderr line naming BRIDGE_BIND_ADDRESS and the address, before the crank runs a cycle', async () => {
    const port = await listening(createServer());
    const rpc = await countingRpc();
    const files = keypairDir();
    cleanups.push(() => files.remove());
    const server = await run({
      BRIDGE_BIND_ADDRESS: `127.0.0.1:${port}`,
      BRIDGE_SOURCE_RPC_URL: rpc.url,
      BRIDGE_TARGET_RPC_URL: rpc.url,
      BRIDGE_SOURCE_CHAIN_ID: '1',
      BRIDGE_TARGET_CHAIN_ID: '2',
      BRIDGE_AUTHORITY_KEYPAIR: files.copyFixture(),
    });
    expect(server.stderr()).toBe(
      `BRIDGE_BIND_ADDRESS: cannot listen on 127.0.0.1:${port}: the address is already in use (EADDRINUSE): stop what holds it or choose another port\n`,
    );
    expect(server.stdout()).not.toMatch(/"level":"fatal"|stack|crank started|crank cycle/);
    expect(rpc.requests()).toBe(0);
  });

  it('names PORT when PORT chose the port', async () => {
    const port = await listening(createServer());
    // 0.0.0.0 includes 127.0.0.1, so the same port is in use for the wildcard bind.
    const server = await run({ PORT: String(port) });
    expect(server.stderr()).toMatch(
      new RegExp(`^PORT: cannot listen on 0\\.0\\.0\\.0:${port} \\(BRIDGE_BIND_ADDRESS unset\\): the address is already in use \\(EADDRINUSE\\)`),
    );
    expect(server.stderr().trimEnd().split('\n')).toHaveLength(1);
  });
});
