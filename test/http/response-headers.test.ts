import { maxHeaderSize } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HEADERS_TIMEOUT_MS } from '../../src/http/connections.js';
import { basicAuth, rawRequest, startTestApp, type TestApp } from '../support/http-app.js';

/**
 * Headers every answer carries, and fastify's own refusals in the project's error shape: browsers
 * must not sniff content types nor leak this server's URLs as a referrer, admin answers (the
 * crank page and its assets included) are never cached, and a path that is not valid
 * percent-encoding, or bytes Node's parser refuses, get `{error, message}` like every other error.
 */

const CREDENTIALS = { username: 'operator', password: 'headers-password' };
let app: TestApp | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('response headers', () => {
  it('every answer carries nosniff and no-referrer; admin answers, assets included, are no-store', async () => {
    app = await startTestApp({ auth: CREDENTIALS });
    const authorization = basicAuth(CREDENTIALS.username, CREDENTIALS.password);
    const admin = ['/crank/ui', '/crank/ui/assets/crank-ui.js', '/crank/machine', '/crank/activity', '/transfers'];
    for (const path of [...admin, '/health', '/metrics', '/nowhere', '/%zz']) {
      const res = await rawRequest(app.port, { method: 'GET', path, headers: { authorization } });
      expect(res.headers['x-content-type-options'], path).toBe('nosniff');
      expect(res.headers['referrer-policy'], path).toBe('no-referrer');
    }
    for (const path of admin) {
      const res = await rawRequest(app.port, { method: 'GET', path, headers: { authorization } });
      expect(res.headers['cache-control'], path).toBe('no-store');
    }
    // A refused admin request is not cacheable either.
    expect((await rawRequest(app.port, { method: 'GET', path: '/crank/ui' })).headers['cache-control']).toBe('no-store');
  });

  it('a path with a bad percent-encoding gets the project error shape, not FST_ERR_BAD_URL', async () => {
    app = await startTestApp();
    for (const path of ['/%zz', '/transfers/%E0%A4%A', '/health%']) {
      const res = await rawRequest(app.port, { method: 'GET', path });
      expect(res.status, path).toBe(400);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      const body = JSON.parse(res.body) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(['error', 'message']);
      expect(body).toEqual({ error: 'bad_url', message: `the request path ${JSON.stringify(path)} is not valid percent-encoding` });
    }
  });

  it('bytes that are not HTTP, oversized headers and headers that never complete get the project shape and headers', async () => {
    app = await startTestApp();
    const exchange = (bytes: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port: app!.port });
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => (text += chunk));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
        socket.setTimeout(HEADERS_TIMEOUT_MS + 5_000, () => socket.destroy(new Error('no answer')));
        socket.write(bytes);
      });
    const cases: Array<[string, number, string, string]> = [
      ['NOT HTTP\r\n\r\n', 400, 'bad_request', 'the request is not valid HTTP/1.1; the connection is closed'],
      [
        `GET /health HTTP/1.1\r\nHost: a\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`,
        431,
        'request_header_fields_too_large',
        `the request headers are larger than the server accepts (${maxHeaderSize} bytes)`,
      ],
      [
        'GET /health HTTP/1.1\r\nHost: a\r\n',
        408,
        'request_timeout',
        `the request headers did not arrive whole within ${HEADERS_TIMEOUT_MS} ms; the connection is closed`,
      ],
    ];
    for (const [bytes, status, error, message] of cases) {
      const [head = '', body = ''] = (await exchange(bytes)).split('\r\n\r\n');
      expect(head.split('\r\n')[0], error).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
      expect(head).toContain('x-content-type-options: nosniff');
      expect(head).toContain('referrer-policy: no-referrer');
      expect(JSON.parse(body)).toEqual({ error, message });
    }
  }, 30_000);
});
