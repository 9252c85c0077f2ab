import { afterEach, describe, expect, it } from 'vitest';
import { MAX_CONNECTIONS } from '../../src/config/config.js';
import { buildApp, KEEP_ALIVE_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../../src/http/app.js';
import { HEADERS_TIMEOUT_MS } from '../../src/http/connections.js';
import { crossSiteReason } from '../../src/http/cross-site.js';
import { errorResponse } from '../../src/http/errors.js';
import { BridgeError } from '../../src/errors.js';
import { basicAuth, rawRequest, startTestApp, testAppDependencies, type TestApp } from '../support/http-app.js';

/**
 * Requests a browser makes for another site, and the server's own limits: admin endpoints
 * refuse cross-site requests (a cached Basic-auth credential does not help them), public ones
 * answer; the HTTP server bounds how long a request may take to arrive and how many
 * connections it holds.
 */

const CREDENTIALS = { username: 'operator', password: 'cross-site-password' };
let app: TestApp | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

const ATTACK = { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site', 'content-type': 'text/plain' };

describe('cross-site requests to admin endpoints', () => {
  it('POST /kill from another site gets 403 with a JSON error and the process is not stopped', async () => {
    app = await startTestApp();
    const refused = await rawRequest(app.port, { method: 'POST', path: '/kill', headers: ATTACK, body: 'x' });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toEqual({
      error: 'cross_site_request',
      message: 'admin endpoints refuse cross-site requests: Sec-Fetch-Site is "cross-site", not same-origin',
    });
    expect(app.kills()).toBe(0);
    expect(app.logs.records()).toContainEqual(expect.objectContaining({ level: 'warn', msg: 'admin request refused: cross-site', url: '/kill' }));
  });

  it('with Basic auth on, cached credentials do not help a cross-site request; the check runs first', async () => {
    app = await startTestApp({ auth: CREDENTIALS });
    const withCredentials = { ...ATTACK, authorization: basicAuth(CREDENTIALS.username, CREDENTIALS.password) };
    for (const path of ['/kill', '/crank/once', '/crank/poll']) {
      expect((await rawRequest(app.port, { method: 'POST', path, headers: withCredentials })).status, path).toBe(403);
    }
    expect((await rawRequest(app.port, { method: 'GET', path: '/transfers', headers: withCredentials })).status).toBe(403);
    expect(app.kills()).toBe(0);
    // Without browser headers (curl, the ops CLI) the same credentials work.
    const curl = await rawRequest(app.port, { method: 'POST', path: '/kill', headers: { authorization: withCredentials.authorization } });
    expect(curl.status).toBe(202);
    expect(app.kills()).toBe(1);
  });

  it('a foreign Origin alone, or a same-site sibling, is refused; the server itself and a typed URL pass', async () => {
    app = await startTestApp();
    const post = (headers: Record<string, string>) => rawRequest(app!.port, { method: 'POST', path: '/crank/poll', headers });
    expect((await post({ origin: 'http://evil.example' })).status).toBe(403);
    expect((await post({ origin: 'null' })).status).toBe(403);
    expect((await post({ 'sec-fetch-site': 'same-site' })).status).toBe(403);
    // The disabled crank answers 409: the request got past the cross-site check.
    expect((await post({ origin: app.url, 'sec-fetch-site': 'same-origin' })).status).toBe(409);
    expect((await post({ 'sec-fetch-site': 'none' })).status).toBe(409);
    expect((await post({})).status).toBe(409);
  });

  it('public endpoints answer any site', async () => {
    app = await startTestApp();
    expect((await rawRequest(app.port, { method: 'GET', path: '/health', headers: ATTACK })).status).toBe(200);
    expect((await rawRequest(app.port, { method: 'GET', path: '/metrics', headers: ATTACK })).status).toBe(200);
  });

  it('crossSiteReason compares the Origin host with the Host header, port included', () => {
    expect(crossSiteReason({ host: '127.0.0.1:8080', origin: 'http://127.0.0.1:8080' })).toBeUndefined();
    expect(crossSiteReason({ host: '127.0.0.1:8080', origin: 'http://127.0.0.1:9090' })).toBe(
      'Origin http://127.0.0.1:9090 is not this server (Host "127.0.0.1:8080")',
    );
    expect(crossSiteReason({ host: 'bridge.internal', origin: 'http://bridge.internal' })).toBeUndefined();
    expect(crossSiteReason({ host: 'bridge.internal' })).toBeUndefined();
  });
});

describe('HTTP server limits', () => {
  it('requests must arrive within 30 s, idle keep-alive connections close after 72 s, at most 256 connections', () => {
    const server = buildApp(testAppDependencies()).server;
    expect([REQUEST_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS, MAX_CONNECTIONS]).toEqual([30_000, 72_000, 256]);
    expect(server.requestTimeout).toBe(REQUEST_TIMEOUT_MS);
    expect(server.keepAliveTimeout).toBe(KEEP_ALIVE_TIMEOUT_MS);
    // Node's own cap is a backstop: limitConnections (connections.ts) holds MAX_CONNECTIONS (probe-reserve.test.ts).
    expect(server.maxConnections).toBe(2 * MAX_CONNECTIONS);
    expect(server.headersTimeout).toBe(HEADERS_TIMEOUT_MS);
    // No socket idle timeout: a POST /crank/once may wait for a long cycle.
    expect(server.timeout).toBe(0);
  });

  it('a full queue of POST /crank/once is 503 with Retry-After', () => {
    const busy = new BridgeError('CRANK__BUSY', { waiting: 64, limit: 64 });
    expect(errorResponse(busy, 'req-1', 1024)).toEqual({
      statusCode: 503,
      headers: { 'retry-after': '5' },
      body: { error: 'crank_busy', message: busy.message },
    });
  });
});
