import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../log/logger.js';

/**
 * Connection slots. The server holds MAX_CONNECTIONS sockets in all; without more, one client
 * opening that many idle sockets (and reopening each one cut) leaves none for /health probes.
 * Two bounds make that cheap to survive:
 * - per remote address: at most BRIDGE_MAX_CONNECTIONS_PER_ADDRESS open sockets; a further one
 *   from that address is closed at once, so MAX_CONNECTIONS - that many slots stay for others;
 * - a socket must send complete request headers within HEADERS_TIMEOUT_MS of opening (or of a
 *   later request's first byte; between requests KEEP_ALIVE_TIMEOUT_MS applies); Node checks every CONNECTIONS_CHECK_INTERVAL_MS, so a silent
 *   or trickling socket is cut within HEADERS_TIMEOUT_MS + CONNECTIONS_CHECK_INTERVAL_MS.
 * Many addresses together can still fill every slot: that is the ingress's to bound.
 */

export const HEADERS_TIMEOUT_MS = 5_000;
export const CONNECTIONS_CHECK_INTERVAL_MS = 1_000;

/**
 * Closes a new socket whose remote address already holds `maxPerAddress` open ones. Warns once
 * when an address first reaches its cap, and again only after all its sockets have closed: a
 * client reconnecting in a loop does not write a line per attempt. Holds one entry per address
 * with an open socket, so at most MAX_CONNECTIONS entries.
 */
export function limitConnectionsPerAddress(server: Server, maxPerAddress: number, logger: Logger): void {
  const open = new Map<string, number>();
  const warned = new Set<string>();
  const release = (address: string) => {
    const left = (open.get(address) ?? 1) - 1;
    if (left > 0) return void open.set(address, left);
    open.delete(address);
    warned.delete(address);
  };
  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const count = open.get(address) ?? 0;
    if (count >= maxPerAddress) {
      if (!warned.has(address)) {
        warned.add(address);
        logger.warn({ remoteAddress: address, limit: maxPerAddress }, 'connection refused: this address holds BRIDGE_MAX_CONNECTIONS_PER_ADDRESS connections');
      }
      socket.destroy();
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => release(address));
  });
}
