import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth } from '../support/http-app.js';
import { FIXTURE_PUBLIC_KEY, keypairDir } from '../support/keypair-files.js';
import { ServerProcess, ensureBuilt } from '../support/server-process.js';

const BASE_ENV = { BRIDGE_BIND_ADDRESS: '127.0.0.1:0', BRIDGE_LOG_LEVEL: 'info' };
const MARKER = 'MARKER-c41f-KEYPAIR-CONTENT';

let servers: ServerProcess[] = [];
let cleanups: Array<() => void | Promise<void>> = [];

function startServer(env: Record<string, string> = {}): ServerProcess {
  const server = new ServerProcess({ ...BASE_ENV, ...env });
  servers.push(server);
  return server;
}

beforeAll(() => {
  ensureBuilt();
}, 120_000);

afterEach(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  for (const cleanup of cleanups) await cleanup();
  servers = [];
  cleanups = [];
});

/** Every stdout line is a JSON log record and stderr is empty: a clean run. */
function expectCleanOutput(server: ServerProcess): void {
  expect(server.stderr()).toBe('');
  expect(server.logs().filter((r) => 'notJson' in r)).toEqual([]);
}

/**
 * A POST whose body has not been sent yet: the `100 Continue` the server answers proves it has
 * parsed the request, which stays in flight until `finish()` sends the body.
 */
async function requestInFlight(url: string, path: string) {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    received += chunk;
  });
  socket.write(`POST ${path} HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: text/plain\r\ncontent-length: 4\r\nexpect: 100-continue\r\n\r\n`);
  await waitFor(socket, () => received.includes('100 Continue'));
  return {
    socket,
    async finish(): Promise<string> {
      socket.write('ping');
      await once(socket, 'end', { signal: AbortSignal.timeout(10_000) });
      return received;
    },
  };
}

async function waitFor(socket: Socket, done: () => boolean): Promise<void> {
  const deadline = AbortSignal.timeout(10_000);
  while (!done()) await once(socket, 'data', { signal: deadline });
}

async function connectionRefused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  try {
    await once(socket, 'connect', { signal: AbortSignal.timeout(2000) });
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ECONNREFUSED';
  } finally {
    socket.destroy();
  }
}

describe('startup', () => {
  it('serves /health on the port it logs, warning once that admin endpoints rely on ingress', async () => {
    const server = startServer({ BRIDGE_POLL_INTERVAL_SEC: '5' });
    const url = await server.listening();
    const health = (await (await fetch(`${url}/health`)).json()) as { crank: { enabled: boolean } };
    expect(health.crank.enabled).toBe(false);
    const warnings = server.logs().filter((r) => r.level === 'warn');
    expect(warnings.map((r) => r.msg)).toEqual([
      'BRIDGE_POLL_INTERVAL_SEC: not a variable this server reads (misspelt?); it is ignored',
      'the crank is disabled: none of BRIDGE_SOURCE_RPC_URL, BRIDGE_TARGET_RPC_URL, BRIDGE_SOURCE_CHAIN_ID, BRIDGE_TARGET_CHAIN_ID, BRIDGE_AUTHORITY_KEYPAIR is set, so this server signs nothing and /health says ok; set them, or BRIDGE_REQUIRE_CRANK=true to make this a startup error where the crank must run',
      'admin endpoints (POST /crank/once, POST /crank/poll, POST /kill, GET /transfers, GET /crank/ui) have no authentication: they rely on ingress restriction (SPEC §5)',
    ]);
    expect(server.logs().find((r) => r.msg === 'bridge server listening')).toMatchObject({
      host: '127.0.0.1',
      adminAuth: 'none (ingress restriction)',
      allowedHosts: [],
      maxConnectionsPerAddress: 32,
      crank: { enabled: false },
    });
  });

  it('BRIDGE_REQUIRE_CRANK=true without the runtime variables: one line, exit 1, nothing listens', async () => {
    const server = startServer({ BRIDGE_REQUIRE_CRANK: 'true' });
    expect(await server.exited).toEqual({ code: 1, signal: null });
    expect(server.stderr()).toBe(
      'BRIDGE_REQUIRE_CRANK: true, but none of BRIDGE_SOURCE_RPC_URL, BRIDGE_TARGET_RPC_URL, BRIDGE_SOURCE_CHAIN_ID, BRIDGE_TARGET_CHAIN_ID, BRIDGE_AUTHORITY_KEYPAIR is set: the crank would be disabled and this server would sign nothing; set them, or unset BRIDGE_REQUIRE_CRANK for a server without a crank\n',
    );
    expect(server.logs()).toEqual([]);
  });

  it('prints one line per configuration problem on stderr and exits 1 without a stack trace or listening', async () => {
    const server = startServer({
      BRIDGE_SOURCE_CHAIN_ID: '70000',
      BRIDGE_AUTH_USERNAME: 'ops',
      BRIDGE_CRANK_MAX_ATTEMPTS: '0',
    });
    expect(await server.exited).toEqual({ code: 1, signal: null });
    const set = 'set: BRIDGE_SOURCE_CHAIN_ID';
    const all =
      'the crank needs all of BRIDGE_SOURCE_RPC_URL, BRIDGE_TARGET_RPC_URL, BRIDGE_SOURCE_CHAIN_ID, BRIDGE_TARGET_CHAIN_ID, BRIDGE_AUTHORITY_KEYPAIR once any is set';
    expect(server.stderr()).toBe(
      [
        'BRIDGE_AUTH_PASSWORD: missing; BRIDGE_AUTH_USERNAME and BRIDGE_AUTH_PASSWORD must be set together (both to protect the admin endpoints, neither to rely on ingress restriction)',
        `BRIDGE_SOURCE_RPC_URL: missing; ${all} (${set})`,
        `BRIDGE_TARGET_RPC_URL: missing; ${all} (${set})`,
        'BRIDGE_SOURCE_CHAIN_ID: expected an integer 0..65535, got "70000"',
        `BRIDGE_TARGET_CHAIN_ID: missing; ${all} (${set})`,
        `BRIDGE_AUTHORITY_KEYPAIR: missing; ${all} (${set})`,
        'BRIDGE_CRANK_MAX_ATTEMPTS: expected an integer 1..4294967295 (at least one attempt), got "0"',
        '',
      ].join('\n'),
    );
    expect(server.stdout()).toBe('');
  });

  it.each([
    ['text that is not JSON', `${MARKER}\n[1, 2, 3]`],
    ['an array holding the marker', JSON.stringify([MARKER, ...Array.from({ length: 63 }, () => 7)])],
    ['an object holding the marker', JSON.stringify({ secretKey: MARKER })],
  ])('refuses a malformed keypair file (%s) without printing any of its content', async (_name, content) => {
    const files = keypairDir();
    cleanups.push(() => files.remove());
    const path = files.write('authority.json', content);
    const server = startServer({
      BRIDGE_SOURCE_RPC_URL: 'http://127.0.0.1:9',
      BRIDGE_TARGET_RPC_URL: 'http://127.0.0.1:9',
      BRIDGE_SOURCE_CHAIN_ID: '1',
      BRIDGE_TARGET_CHAIN_ID: '2',
      BRIDGE_AUTHORITY_KEYPAIR: path,
    });
    expect(await server.exited).toEqual({ code: 1, signal: null });
    const stderrLines = server
      .stderr()
      .split('\n')
      .filter((line) => line !== '');
    expect(stderrLines).toHaveLength(1);
    expect(stderrLines[0]).toMatch(new RegExp(`^BRIDGE_AUTHORITY_KEYPAIR: keypair file ${JSON.stringify(path)} `));
    expect(`${server.stdout()}${server.stderr()}`).not.toContain(MARKER);
    expect(`${server.stdout()}${server.stderr()}`).not.toContain('7,7,7');
    expect(server.logs().find((r) => r.msg === 'bridge server listening')).toBeUndefined();
  });
});

describe('graceful shutdown', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('%s: stops, logs why, exits 0 with nothing on stderr', async (signal) => {
    const server = startServer();
    await server.listening();
    server.child.kill(signal);
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.logs().map((r) => r.msg)).toEqual(expect.arrayContaining(['shutting down', 'shutdown complete']));
    expect(server.logs().find((r) => r.msg === 'shutting down')).toMatchObject({ trigger: signal });
    expectCleanOutput(server);
  });

  it('POST /kill: the 202 answer arrives whole, then the process exits 0', async () => {
    const server = startServer();
    const url = await server.listening();
    const res = await fetch(`${url}/kill`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ status: 'shutting_down', message: 'graceful shutdown started' });
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.logs().find((r) => r.msg === 'shutting down')).toMatchObject({ trigger: 'POST /kill' });
    expectCleanOutput(server);
  });

  it('a cross-site POST /kill carrying valid credentials gets 403 and the process lives on', async () => {
    const server = startServer({ BRIDGE_AUTH_USERNAME: 'ops', BRIDGE_AUTH_PASSWORD: 's3cret-pw' });
    const url = await server.listening();
    const forged = await fetch(`${url}/kill`, {
      method: 'POST',
      headers: {
        authorization: basicAuth('ops', 's3cret-pw'),
        origin: 'http://evil.example',
        'sec-fetch-site': 'cross-site',
        'content-type': 'text/plain',
      },
      body: 'x',
    });
    expect(forged.status).toBe(403);
    expect(((await forged.json()) as { error: string }).error).toBe('cross_site_request');
    expect((await fetch(`${url}/health`)).status).toBe(200);
    expect(server.child.exitCode).toBeNull();
    const accepted = await fetch(`${url}/kill`, { method: 'POST', headers: { authorization: basicAuth('ops', 's3cret-pw') } });
    expect(accepted.status).toBe(202);
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });

  it('POST /kill with wrong credentials is refused and the server keeps serving', async () => {
    const server = startServer({ BRIDGE_AUTH_USERNAME: 'ops', BRIDGE_AUTH_PASSWORD: 's3cret-pw' });
    const url = await server.listening();
    const refused = await fetch(`${url}/kill`, { method: 'POST', headers: { authorization: basicAuth('ops', 'nope') } });
    expect(refused.status).toBe(401);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    const accepted = await fetch(`${url}/kill`, { method: 'POST', headers: { authorization: basicAuth('ops', 's3cret-pw') } });
    expect(accepted.status).toBe(202);
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.stdout()).not.toContain('s3cret-pw');
  });

  it('stops accepting connections but finishes a request already in flight, then exits 0', async () => {
    const server = startServer();
    const url = await server.listening();
    const inFlight = await requestInFlight(url, '/crank/once');
    server.child.kill('SIGTERM');
    await server.waitForLog((r) => r.msg === 'shutting down');
    await expect.poll(() => connectionRefused(url), { timeout: 5000 }).toBe(true);
    const answer = await inFlight.finish();
    expect(answer).toMatch(/HTTP\/1\.1 409 Conflict/);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer).toContain('"error":"crank_disabled"');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expectCleanOutput(server);
  });

  it('a second signal during shutdown exits at once', async () => {
    const server = startServer({ BRIDGE_SHUTDOWN_TIMEOUT_MS: '20000' });
    const url = await server.listening();
    const stuck = await requestInFlight(url, '/kill');
    cleanups.push(() => void stuck.socket.destroy());
    server.child.kill('SIGTERM');
    await server.waitForLog((r) => r.msg === 'shutting down');
    const secondSignalAt = Date.now();
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 1, signal: null });
    expect(Date.now() - secondSignalAt).toBeLessThan(3000);
    expect(server.logs()).toContainEqual(
      expect.objectContaining({ level: 'warn', msg: 'second signal during shutdown: exiting now', signal: 'SIGTERM' }),
    );
  });

  it('gives up at the shutdown deadline plus the close margin and exits 1', async () => {
    const server = startServer({ BRIDGE_SHUTDOWN_TIMEOUT_MS: '200' });
    const url = await server.listening();
    const stuck = await requestInFlight(url, '/kill');
    cleanups.push(() => void stuck.socket.destroy());
    const signalledAt = Date.now();
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 1, signal: null });
    const elapsed = Date.now() - signalledAt;
    expect(elapsed).toBeGreaterThanOrEqual(1600);
    expect(elapsed).toBeLessThan(6000);
    expect(server.logs()).toContainEqual(
      expect.objectContaining({ level: 'error', msg: 'shutdown did not finish in time: exiting now', delayMs: 1700 }),
    );
  });
});

/**
 * A loopback JSON-RPC endpoint that holds every request until the test releases it, then answers
 * with a JSON-RPC error, and answers later requests (the chain client's retries) at once with
 * the same error: a crank cycle against it runs exactly as long as the test wants.
 */
async function heldRpc() {
  const held: Array<{ body: string; res: ServerResponse }> = [];
  let released = false;
  const answer = ({ body, res }: { body: string; res: ServerResponse }) => res.setHeader('content-type', 'application/json').end(rpcError(body));
  const events = new EventEmitter();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      if (released) return answer({ body, res });
      held.push({ body, res });
      events.emit('request');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async requested(): Promise<void> {
      if (held.length === 0) await once(events, 'request', { signal: AbortSignal.timeout(10_000) });
    },
    releaseAll(): void {
      released = true;
      for (const request of held.splice(0)) answer(request);
    },
    close(): void {
      server.closeAllConnections();
      server.close();
    },
  };
}

function rpcError(body: string): string {
  const error = (id: unknown) => ({ jsonrpc: '2.0', id, error: { code: -32603, message: 'held by the test, then refused' } });
  const request = JSON.parse(body) as { id?: unknown } | Array<{ id?: unknown }>;
  return JSON.stringify(Array.isArray(request) ? request.map((r) => error(r.id)) : error(request.id));
}

describe('with runtime configuration (the real crank and chain client)', () => {
  async function startCrankServer(env: Record<string, string>) {
    const rpc = await heldRpc();
    cleanups.push(() => rpc.close());
    const files = keypairDir();
    cleanups.push(() => files.remove());
    const server = startServer({
      BRIDGE_SOURCE_RPC_URL: rpc.url,
      BRIDGE_TARGET_RPC_URL: rpc.url,
      BRIDGE_SOURCE_CHAIN_ID: '1',
      BRIDGE_TARGET_CHAIN_ID: '2',
      BRIDGE_AUTHORITY_KEYPAIR: files.copyFixture(0o644),
      BRIDGE_POLL_INTERVAL_SECS: '3600',
      ...env,
    });
    return { rpc, server, url: await server.listening() };
  }

  it('starts the crank, warns about the keypair file mode, and reports enabled on /health', async () => {
    const { rpc, server, url } = await startCrankServer({});
    const health = (await (await fetch(`${url}/health`)).json()) as { crank: { enabled: boolean } };
    expect(health.crank.enabled).toBe(true);
    expect(server.logs().find((r) => r.msg === 'bridge server listening')).toMatchObject({
      crank: { enabled: true, authority: FIXTURE_PUBLIC_KEY, sourceChainId: 1, targetChainId: 2, pollIntervalMs: 3_600_000 },
    });
    rpc.releaseAll();
  });

  it('a tip account that is the authority, a sysvar or the bridge program: one line each naming the variable, exit 1, nothing listens', async () => {
    const files = keypairDir();
    cleanups.push(() => files.remove());
    const program = 'BridgeProgram111111111111111111111111111111';
    const server = startServer({
      BRIDGE_SOURCE_RPC_URL: 'http://127.0.0.1:9/',
      BRIDGE_TARGET_RPC_URL: 'http://127.0.0.1:9/',
      BRIDGE_SOURCE_CHAIN_ID: '1',
      BRIDGE_TARGET_CHAIN_ID: '2',
      BRIDGE_AUTHORITY_KEYPAIR: files.copyFixture(0o600),
      BRIDGE_SOURCE_TIP_LAMPORTS: '5000',
      BRIDGE_SOURCE_TIP_ACCOUNT: `4ACfpUFoaSD9bfPdeu6DBt89gB6ENTeHBXCAi87NhDEE,SysvarRent111111111111111111111111111111111`,
      BRIDGE_TARGET_TIP_LAMPORTS: '5000',
      BRIDGE_TARGET_TIP_ACCOUNT: `${FIXTURE_PUBLIC_KEY},${program}`,
    });
    expect(await server.exited).toEqual({ code: 1, signal: null });
    const advice = 'not a tip account; list the tip accounts the send-only path publishes';
    expect(server.stderr()).toBe(
      [
        `BRIDGE_SOURCE_TIP_ACCOUNT: SysvarRent111111111111111111111111111111111 is the Rent sysvar, ${advice}`,
        `BRIDGE_TARGET_TIP_ACCOUNT: ${FIXTURE_PUBLIC_KEY} is the authority itself (the key this server signs with), ${advice}`,
        `BRIDGE_TARGET_TIP_ACCOUNT: ${program} is the bridge program (BRIDGE_SOURCE_PROGRAM_ID and BRIDGE_TARGET_PROGRAM_ID), ${advice}`,
        '',
      ].join('\n'),
    );
    expect(server.stdout()).toBe('');
  });

  it('the startup line says the priority fee floor and cap', async () => {
    const { rpc, server } = await startCrankServer({ BRIDGE_PRIORITY_FEE_MIN_MICROLAMPORTS: '500', BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS: '250000' });
    // A day of hourly cycles, each bidding the cap on one instruction's default 200,000 CU.
    expect(server.logs().find((r) => r.msg === 'bridge server listening')).toMatchObject({
      crank: {
        priorityFeeMinMicroLamports: 500,
        priorityFeeCapMicroLamports: 250_000,
        minBalanceLamports: 24 * (5000 + 50_000),
        tipLamports: { source: 0, target: 0 },
      },
    });
    rpc.releaseAll();
  });

  it('the startup line says the tip of each chain and how many accounts it goes to; the day of fees counts it', async () => {
    const accounts = '4ACfpUFoaSD9bfPdeu6DBt89gB6ENTeHBXCAi87NhDEE,D2L6yPZ2FmmmTKPgzaMKdhu6EWZcTpLy1Vhx8uvZe7NZ';
    const { rpc, server } = await startCrankServer({ BRIDGE_TARGET_TIP_LAMPORTS: '5000', BRIDGE_TARGET_TIP_ACCOUNT: accounts });
    expect(server.logs().find((r) => r.msg === 'bridge server listening')).toMatchObject({
      crank: { tipLamports: { source: 0, target: 5_000 }, tipAccounts: { source: 0, target: 2 }, minBalanceLamports: 24 * (5000 + 20_000 + 5_000) },
    });
    rpc.releaseAll();
  });

  it('the startup line lists each chain endpoint origin, primary first, never a path or query', async () => {
    const { rpc, server } = await startCrankServer({
      BRIDGE_SOURCE_RPC_FALLBACK_URLS: 'http://127.0.0.1:9/v1?api-key=secret-1,http://127.0.0.2:9/',
      BRIDGE_TARGET_RPC_FALLBACK_URLS: 'http://127.0.0.1:9/key/secret-2',
    });
    const line = server.logs().find((r) => r.msg === 'bridge server listening');
    const primary = new URL(rpc.url).origin;
    expect(line).toMatchObject({
      crank: { sourceRpc: [primary, 'http://127.0.0.1:9', 'http://127.0.0.2:9'], targetRpc: [primary, 'http://127.0.0.1:9'], rpcMaxSlotLag: 128 },
    });
    expect(JSON.stringify(server.logs())).not.toMatch(/secret/);
    expect(server.logs()).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: expect.stringMatching(/^BRIDGE_AUTHORITY_KEYPAIR: keypair file ".*" is readable by group or others \(mode 0644\)/),
      }),
    );
    rpc.releaseAll();
  });

  it('BRIDGE_DRY_RUN=true: the startup line, the crank line and /health say so; the metric is 1', async () => {
    const { rpc, server, url } = await startCrankServer({ BRIDGE_DRY_RUN: 'true' });
    const health = (await (await fetch(`${url}/health`)).json()) as { crank: Record<string, unknown> };
    expect(health.crank).toMatchObject({ enabled: true, dry_run: true, total_actions_submitted: 0 });
    expect(server.logs().find((r) => r.msg === 'bridge server listening')).toMatchObject({ crank: { enabled: true, dryRun: true } });
    expect(server.logs().find((r) => r.msg === 'crank started in dry run: it plans every cycle and submits nothing')).toMatchObject({ dryRun: true });
    expect(await (await fetch(`${url}/metrics`)).text()).toMatch(/^bridge_crank_dry_run 1$/m);
    rpc.releaseAll();
  });

  it('BRIDGE_TRANSFER_WAIT_ALERT_SECS: in the startup line and published for BridgeTransfersWaiting', async () => {
    const { rpc, server, url } = await startCrankServer({ BRIDGE_TRANSFER_WAIT_ALERT_SECS: '1800' });
    expect(server.logs().find((r) => r.msg === 'bridge server listening')).toMatchObject({ crank: { transferWaitAlertMs: 1_800_000 } });
    expect(await (await fetch(`${url}/metrics`)).text()).toMatch(/^bridge_transfer_wait_alert_seconds 1800$/m);
    rpc.releaseAll();
  });

  it('SIGTERM lets the running cycle finish, then exits 0', async () => {
    const { rpc, server } = await startCrankServer({ BRIDGE_SHUTDOWN_TIMEOUT_MS: '20000' });
    await rpc.requested();
    server.child.kill('SIGTERM');
    await server.waitForLog((r) => r.msg === 'shutting down');
    expect(server.child.exitCode).toBeNull();
    rpc.releaseAll();
    expect(await server.exited).toEqual({ code: 0, signal: null });
    const messages = server.logs().map((r) => r.msg);
    const order = ['shutting down', 'crank cycle finished', 'crank stopped', 'shutdown complete'].map((m) => messages.lastIndexOf(m));
    expect(order.every((index) => index >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expectCleanOutput(server);
  });

  it('SIGTERM aborts a cycle still running at BRIDGE_SHUTDOWN_TIMEOUT_MS and exits 0 before the hard stop', async () => {
    const { rpc, server } = await startCrankServer({ BRIDGE_SHUTDOWN_TIMEOUT_MS: '300' });
    await rpc.requested();
    const signalledAt = Date.now();
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalledAt).toBeLessThan(300 + 1500);
    expect(server.logs().map((r) => r.msg)).toEqual(expect.arrayContaining(['crank stopped', 'shutdown complete']));
    expectCleanOutput(server);
  });
});
