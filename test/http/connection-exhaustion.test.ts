import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_CONNECTIONS } from '../../src/config/config.js';
import { CONNECTIONS_CHECK_INTERVAL_MS, HEADERS_TIMEOUT_MS } from '../../src/http/connections.js';
import { startTestApp, type TestApp } from '../support/http-app.js';

/**
 * Connection-slot exhaustion, with production timing: one address (127.0.0.2, a loopback
 * address of its own) opens MAX_CONNECTIONS idle sockets and reopens each one the server cuts,
 * as the attack of issue 24 did, while a probe from 127.0.0.1 asks /health twice a second.
 */

const ATTACKER = '127.0.0.2';
const ATTACK_MS = 12_000;
const PROBE_EVERY_MS = 500;
const PROBE_TIMEOUT_MS = 2_000;
const REOPEN_DELAY_MS = 250;

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

interface Attack {
  opened(): number;
  cut(): number;
  stop(): void;
}

/** `count` idle sockets from `localAddress`, each reopened REOPEN_DELAY_MS after it closes, until stop(). */
function holdIdleSockets(port: number, localAddress: string, count: number): Attack {
  let stopped = false;
  let opened = 0;
  let cut = 0;
  const sockets = new Set<Socket>();
  const open = () => {
    if (stopped) return;
    const socket = connect({ host: '127.0.0.1', port, localAddress });
    sockets.add(socket);
    socket.on('connect', () => {
      opened += 1;
    });
    socket.on('error', () => undefined);
    socket.resume();
    socket.on('close', () => {
      sockets.delete(socket);
      if (stopped) return;
      cut += 1;
      setTimeout(open, REOPEN_DELAY_MS).unref();
    });
  };
  for (let i = 0; i < count; i += 1) open();
  return {
    opened: () => opened,
    cut: () => cut,
    stop: () => {
      stopped = true;
      for (const socket of sockets) socket.destroy();
    },
  };
}

/** One GET /health on a fresh connection from 127.0.0.1: its status, or 0 when no answer came within PROBE_TIMEOUT_MS. */
function probeHealth(port: number): Promise<number> {
  return new Promise<number>((resolve) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path: '/health', localAddress: '127.0.0.1', agent: false, timeout: PROBE_TIMEOUT_MS },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

describe('connection-slot exhaustion', () => {
  it(
    `${MAX_CONNECTIONS} idle sockets from one address, reopened when cut, leave /health answering every probe`,
    async () => {
      app = await startTestApp();
      const attack = holdIdleSockets(app.port, ATTACKER, MAX_CONNECTIONS);
      const statuses: number[] = [];
      const started = Date.now();
      try {
        while (Date.now() - started < ATTACK_MS) {
          const [status] = await Promise.all([probeHealth(app.port), new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS))]);
          statuses.push(status);
        }
      } finally {
        attack.stop();
      }
      expect(statuses.length).toBeGreaterThanOrEqual(ATTACK_MS / (PROBE_EVERY_MS + PROBE_TIMEOUT_MS));
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
      // The attacker did get its share, and the server kept cutting what it held.
      expect(attack.opened()).toBeGreaterThanOrEqual(32);
      expect(attack.cut()).toBeGreaterThan(MAX_CONNECTIONS);
      // One warning per wave of refusals (all its sockets are cut together every HEADERS_TIMEOUT_MS), not one per socket.
      const warnings = app.logs
        .records()
        .filter((record) => record['msg'] === 'connection refused: this address holds BRIDGE_MAX_CONNECTIONS_PER_ADDRESS connections');
      expect(warnings.length).toBeGreaterThanOrEqual(1);
      expect(warnings.length).toBeLessThanOrEqual(Math.ceil(ATTACK_MS / HEADERS_TIMEOUT_MS) + 1);
    },
    ATTACK_MS + 20_000,
  );

  it(`a socket that has not sent complete headers is cut within ${HEADERS_TIMEOUT_MS} + ${CONNECTIONS_CHECK_INTERVAL_MS} ms`, async () => {
    app = await startTestApp();
    const silent = connect({ host: '127.0.0.1', port: app.port });
    const trickling = connect({ host: '127.0.0.1', port: app.port });
    trickling.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const trickle = setInterval(() => trickling.write('X-A: b\r\n'), 500);
    const started = Date.now();
    const closedAfter = (socket: Socket) =>
      new Promise<number>((resolve) => {
        socket.on('error', () => undefined);
        // Read what the server sends (its 408), so that its close is seen.
        socket.resume();
        socket.on('close', () => resolve(Date.now() - started));
      });
    const limit = HEADERS_TIMEOUT_MS + CONNECTIONS_CHECK_INTERVAL_MS + 1_000;
    const guard = setTimeout(() => {
      silent.destroy();
      trickling.destroy();
    }, limit + 5_000);
    const [silentMs, tricklingMs] = await Promise.all([closedAfter(silent), closedAfter(trickling)]);
    clearInterval(trickle);
    clearTimeout(guard);
    for (const ms of [silentMs, tricklingMs]) {
      expect(ms).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
      expect(ms).toBeLessThanOrEqual(limit);
    }
  }, 30_000);
});
