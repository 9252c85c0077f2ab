import { once } from 'node:events';
import { createServer } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_CONNECTIONS } from '../../src/config/config.js';
import { limitConnections, PROBE_RESERVE } from '../../src/http/connections.js';
import { captureLogs } from '../support/log-capture.js';
import { startTestApp, type TestApp } from '../support/http-app.js';

/**
 * Issue 33, item 5: 8 loopback addresses x 32 keep-alive sockets (the per-address limit) filled
 * MAX_CONNECTIONS, and 145 of 145 /health probes failed for 72 s (the keep-alive timeout). Here
 * the same 8 x 32 sockets, each after one answered request, are held open while a probe from a
 * ninth address asks /health.
 */

const ADDRESSES = 8;
const PER_ADDRESS = 32;
const PROBES = 20;

let app: TestApp | undefined;
const sockets = new Set<Socket>();

afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await app?.close();
  app = undefined;
});

/** A keep-alive socket from `localAddress` that has had one request answered; false when the server closed it instead. */
async function keepAliveSocket(port: number, localAddress: string): Promise<boolean> {
  const socket = connect({ host: '127.0.0.1', port, localAddress });
  sockets.add(socket);
  socket.on('error', () => undefined);
  socket.write('GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
  // A refused socket is reset: its 'error' rejects the wait for data.
  const answered = once(socket, 'data').then(
    () => true,
    () => false,
  );
  const closed = once(socket, 'close').then(() => false);
  return Promise.race([answered, closed, new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 10_000).unref())]);
}

describe('a reservation keeps /health answerable', () => {
  it(`holds ${ADDRESSES} x ${PER_ADDRESS} keep-alive sockets and still answers every probe from another address`, async () => {
    app = await startTestApp({ maxConnectionsPerAddress: PER_ADDRESS });
    const held = await Promise.all(
      Array.from({ length: ADDRESSES * PER_ADDRESS }, (_, i) => keepAliveSocket(app!.port, `127.0.0.${1 + (i % ADDRESSES)}`)),
    );
    const open = held.filter(Boolean).length;
    expect(open).toBe(MAX_CONNECTIONS - PROBE_RESERVE);

    let answered = 0;
    for (let i = 0; i < PROBES; i++) {
      const probe = connect({ host: '127.0.0.1', port: app.port, localAddress: '127.0.0.9' });
      sockets.add(probe);
      probe.on('error', () => undefined);
      probe.write('GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n');
      const [reply] = (await once(probe, 'data', { signal: AbortSignal.timeout(2_000) })) as [Buffer];
      if (reply.toString('latin1').startsWith('HTTP/1.1 200')) answered += 1;
      probe.destroy();
    }
    expect(answered).toBe(PROBES);
    const refusals = app.logs.records().filter((line) => String(line.msg).includes('kept for addresses holding none'));
    // Once per address, not once per refused socket.
    expect(refusals.length).toBeLessThanOrEqual(ADDRESSES);
    expect(refusals.length).toBeGreaterThan(0);
  });
});

describe('limitConnections', () => {
  it(`shares maxConnections - ${PROBE_RESERVE} between addresses that hold connections, and never holds more than maxConnections`, async () => {
    const logs = captureLogs('warn');
    const server = createServer((_request, response) => response.end('ok'));
    limitConnections(server, { maxPerAddress: 32, maxConnections: PROBE_RESERVE + 4 }, logs.logger);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      const from = (address: string) => keepAliveSocket(port, address);
      // One address takes the 4 shared slots; its fifth connection is refused.
      expect(await Promise.all(Array.from({ length: 5 }, () => from('127.0.0.1')))).toEqual([true, true, true, true, false]);
      // Each of 16 new addresses gets one of the reserved slots; a 17th finds the server full.
      const reserved = await Promise.all(Array.from({ length: PROBE_RESERVE }, (_, i) => from(`127.0.1.${i + 1}`)));
      expect(reserved.every(Boolean)).toBe(true);
      expect(await from('127.0.2.1')).toBe(false);
    } finally {
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      server.close();
    }
  });
});
