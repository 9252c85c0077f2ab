import { afterEach, describe, expect, it } from 'vitest';
import { basicAuth, rawRequest, startTestApp, type TestApp } from '../support/http-app.js';

/**
 * Headers every answer carries, and fastify's own refusals in the project's error shape: browsers
 * must not sniff content types nor leak this server's URLs as a referrer, admin answers (the
 * crank page and its assets included) are never cached, and a path that is not valid
 * percent-encoding gets `{error, message}` like every other error.
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
});
