import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../log/logger.js';

/**
 * Connection slots. The server holds MAX_CONNECTIONS sockets in all; without more, clients
 * holding that many idle sockets (and reopening each one cut) leave none for /health probes.
 * Four bounds make that cheap to survive:
 * - per remote address: at most BRIDGE_MAX_CONNECTIONS_PER_ADDRESS open sockets; a further one
 *   from that address is closed at once;
 * - a reservation for probes: the last PROBE_RESERVE slots go only to an address that holds no
 *   other open socket. Addresses that already hold sockets share MAX_CONNECTIONS - PROBE_RESERVE
 *   (240), so 8 addresses x 32 keep-alive sockets leave 16 slots;
 * - eviction of idle keep-alive sockets: when every slot is taken and a socket arrives from an
 *   address holding none (a probe), an idle keep-alive socket (one that has been answered and
 *   carries no request now) of the address holding the most sockets is closed to make room. The
 *   reservation alone is not enough: 24 addresses each holding idle sockets took the reserved
 *   slots with their first socket each, and 0 of 16 probes got in. So a new address is refused
 *   only while all MAX_CONNECTIONS sockets are busy: each carrying a request (bounded by
 *   REQUEST_TIMEOUT_MS, src/http/app.ts, or by the cycle a POST /crank/once waits for) or not
 *   yet done sending its first request headers (bounded by the next bound);
 * - a socket must send complete request headers within HEADERS_TIMEOUT_MS of opening (or of a
 *   later request's first byte; between requests KEEP_ALIVE_TIMEOUT_MS applies); Node checks every CONNECTIONS_CHECK_INTERVAL_MS, so a silent
 *   or trickling socket is cut within HEADERS_TIMEOUT_MS + CONNECTIONS_CHECK_INTERVAL_MS.
 * The ingress's to bound: MAX_CONNECTIONS addresses each opening a socket and sending nothing
 * (or one slow request each) at least every HEADERS_TIMEOUT_MS; test/http/probe-reserve.test.ts
 * holds the rest with real sockets.
 */

/** Slots kept for addresses holding no open socket (probes): the rest, MAX_CONNECTIONS - PROBE_RESERVE, is shared. */
export const PROBE_RESERVE = 16;
export const HEADERS_TIMEOUT_MS = 5_000;
export const CONNECTIONS_CHECK_INTERVAL_MS = 1_000;

/** One open socket: whose, and whether it is idle between keep-alive requests. */
interface Held {
  address: string;
  /** Requests received and not yet answered (HTTP/1.1 pipelining allows several). */
  requests: number;
  /** At least one answer went out: with no request now, the socket idles on keep-alive. */
  answered: boolean;
}

/**
 * Closes a new socket whose remote address already holds `maxPerAddress` open ones, or already
 * holds one while `maxConnections - PROBE_RESERVE` are open in all; a socket from an address
 * holding none while `maxConnections` are open takes the place of an idle keep-alive socket, or
 * is closed when there is none. Warns once per address when it is first refused or has a socket
 * evicted, and again only after all its sockets have closed: a client reconnecting in a loop
 * does not write a line per attempt. Holds one entry per open socket, at most `maxConnections`.
 */
export function limitConnections(server: Server, limits: { maxPerAddress: number; maxConnections: number }, logger: Logger): void {
  const { maxPerAddress, maxConnections } = limits;
  const shared = maxConnections - PROBE_RESERVE;
  const open = new Map<string, number>();
  const held = new Map<Socket, Held>();
  const warned = new Set<string>();
  const release = (socket: Socket, address: string) => {
    held.delete(socket);
    const left = (open.get(address) ?? 1) - 1;
    if (left > 0) return void open.set(address, left);
    open.delete(address);
    warned.delete(address);
  };
  const warnOnce = (address: string, fields: Record<string, number | string>, message: string) => {
    if (warned.has(address)) return;
    warned.add(address);
    logger.warn({ remoteAddress: address, ...fields }, message);
  };
  const refuse = (socket: Socket, address: string, fields: Record<string, number>, why: string) => {
    warnOnce(address, fields, `connection refused: ${why}`);
    socket.destroy();
  };
  /** Closes the oldest idle keep-alive socket of the address holding the most; false when none is idle. */
  const evictIdle = (forAddress: string): boolean => {
    let victim: [Socket, Held] | undefined;
    for (const entry of held) {
      const [, state] = entry;
      if (!state.answered || state.requests > 0) continue;
      if (victim === undefined || (open.get(state.address) ?? 0) > (open.get(victim[1].address) ?? 0)) victim = entry;
    }
    if (victim === undefined) return false;
    const [socket, { address }] = victim;
    warnOnce(
      address,
      { open: held.size, newAddress: forAddress },
      `idle keep-alive connection closed: all ${maxConnections} connections were open and an address holding none (a probe) needed one`,
    );
    // Released now, not at 'close': the slot is the new socket's from this moment.
    release(socket, address);
    socket.destroy();
    return true;
  };
  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const count = open.get(address) ?? 0;
    if (count >= maxPerAddress) {
      return refuse(socket, address, { maxPerAddress }, 'this address holds BRIDGE_MAX_CONNECTIONS_PER_ADDRESS connections');
    }
    if (count > 0 && held.size >= shared) {
      return refuse(
        socket,
        address,
        { open: held.size, reserve: PROBE_RESERVE },
        `${held.size} connections are open; the last ${PROBE_RESERVE} slots are kept for addresses holding none (probes)`,
      );
    }
    if (held.size >= maxConnections && !evictIdle(address)) {
      return refuse(
        socket,
        address,
        { open: held.size, maxConnections },
        `${held.size} connections are open, the most the server holds, and none is idle`,
      );
    }
    open.set(address, count + 1);
    held.set(socket, { address, requests: 0, answered: false });
    socket.once('close', () => {
      if (held.has(socket)) release(socket, address);
    });
  });
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    const state = held.get(request.socket);
    if (state === undefined) return;
    state.requests += 1;
    response.once('close', () => {
      state.requests -= 1;
      state.answered = true;
    });
  });
}
