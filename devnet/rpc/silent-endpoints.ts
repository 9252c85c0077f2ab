import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * Endpoints that fail the way real RPC nodes do, on loopback, to stand beside a devnet node as
 * a chain's second endpoint (tests, benches): a closed port (connection refused) and a stalled
 * one that accepts the connection and the request and never answers.
 */

/** A URL nothing listens on: a port taken, then released. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/`;
}

export interface StalledEndpoint {
  url: string;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Connections open now, and the most ever open at once. */
  readonly open: number;
  readonly mostOpen: number;
  close(): Promise<void>;
}

/** Accepts every connection, reads the request, never writes a byte. */
export async function startStalledEndpoint(): Promise<StalledEndpoint> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  let mostOpen = 0;
  const server = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    mostOpen = Math.max(mostOpen, sockets.size);
    socket.on('close', () => sockets.delete(socket));
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    get accepted() {
      return accepted;
    },
    get open() {
      return sockets.size;
    },
    get mostOpen() {
      return mostOpen;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
