import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../log/logger.js';

/**
 * Connection slots. The server holds MAX_CONNECTIONS sockets in all; without more, one client
 * opening that many idle sockets (and reopening each one cut) leaves none for /health probes.
 * Three bounds make that cheap to survive:
 * - per remote address: at most BRIDGE_MAX_CONNECTIONS_PER_ADDRESS open sockets; a further one
 *   from that address is closed at once;
 * - a reservation for probes: the last PROBE_RESERVE slots go only to an address that holds no
 *   other open socket. Addresses that already hold sockets share MAX_CONNECTIONS - PROBE_RESERVE
 *   (240), so 8 addresses x 32 keep-alive sockets leave 16 slots, and an orchestrator's probe
 *   (one connection from its own address) always finds one while fewer than PROBE_RESERVE such
 *   addresses connect at once;
 * - a socket must send complete request headers within HEADERS_TIMEOUT_MS of opening (or of a
 *   later request's first byte; between requests KEEP_ALIVE_TIMEOUT_MS applies); Node checks every CONNECTIONS_CHECK_INTERVAL_MS, so a silent
 *   or trickling socket is cut within HEADERS_TIMEOUT_MS + CONNECTIONS_CHECK_INTERVAL_MS.
 * Many addresses each opening one socket can still fill every slot: that is the ingress's to bound.
 */

/** Slots kept for addresses holding no open socket (probes): the rest, MAX_CONNECTIONS - PROBE_RESERVE, is shared. */
export const PROBE_RESERVE = 16;
export const HEADERS_TIMEOUT_MS = 5_000;
export const CONNECTIONS_CHECK_INTERVAL_MS = 1_000;

/**
 * Closes a new socket whose remote address already holds `maxPerAddress` open ones, or already
 * holds one while `maxConnections - PROBE_RESERVE` are open in all, or arrives while
 * `maxConnections` are open. Warns once per address when
 * it is first refused, and again only after all its sockets have closed: a client reconnecting
 * in a loop does not write a line per attempt. Holds one entry per address with an open socket,
 * so at most `maxConnections` entries.
 */
export function limitConnections(server: Server, limits: { maxPerAddress: number; maxConnections: number }, logger: Logger): void {
  const { maxPerAddress, maxConnections } = limits;
  const shared = maxConnections - PROBE_RESERVE;
  const open = new Map<string, number>();
  const warned = new Set<string>();
  let total = 0;
  const release = (address: string) => {
    total -= 1;
    const left = (open.get(address) ?? 1) - 1;
    if (left > 0) return void open.set(address, left);
    open.delete(address);
    warned.delete(address);
  };
  const refuse = (socket: Socket, address: string, fields: Record<string, number>, why: string) => {
    if (!warned.has(address)) {
      warned.add(address);
      logger.warn({ remoteAddress: address, ...fields }, `connection refused: ${why}`);
    }
    socket.destroy();
  };
  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const count = open.get(address) ?? 0;
    if (count >= maxPerAddress) {
      return refuse(socket, address, { limit: maxPerAddress }, 'this address holds BRIDGE_MAX_CONNECTIONS_PER_ADDRESS connections');
    }
    if (total >= maxConnections) {
      return refuse(socket, address, { open: total, limit: maxConnections }, `${total} connections are open, the most the server holds`);
    }
    if (count > 0 && total >= shared) {
      return refuse(socket, address, { open: total, reserve: PROBE_RESERVE }, `${total} connections are open; the last ${PROBE_RESERVE} slots are kept for addresses holding none (probes)`);
    }
    open.set(address, count + 1);
    total += 1;
    socket.once('close', () => release(address));
  });
}
