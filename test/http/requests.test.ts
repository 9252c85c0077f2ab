import { afterEach, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../src/http/app.js';
import { rawRequest, startTestApp, type RawResponse, type TestApp } from '../support/http-app.js';

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

function expectJsonError(res: RawResponse, status: number, error: string): { error: string; message: string } {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  const body = JSON.parse(res.body) as { error: string; message: string };
  expect(Object.keys(body).sort()).toEqual(['error', 'message']);
  expect(body.error).toBe(error);
  expect(body.message.length).toBeGreaterThan(0);
  return body;
}

describe('request bodies (no endpoint takes one)', () => {
  it.each([
    ['no body, no content-type', {}, undefined],
    [
      'an empty body with content-type application/json (curl -X POST -H "content-type: application/json")',
      { 'content-type': 'application/json' },
      '',
    ],
    ['an empty JSON object', { 'content-type': 'application/json' }, '{}'],
    ['malformed JSON', { 'content-type': 'application/json' }, '{"oops'],
    ['form data', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1&b=2'],
    ['plain text', { 'content-type': 'text/plain' }, 'run please'],
    ['bytes', { 'content-type': 'application/octet-stream' }, '\u0000\u0001\u0002'],
    ['a body without content-type', {}, 'x'.repeat(10)],
    ['a multipart body', { 'content-type': 'multipart/form-data; boundary=x' }, '--x\r\n\r\nhi\r\n--x--'],
    ['a body of exactly the limit', { 'content-type': 'text/plain' }, 'y'.repeat(MAX_BODY_BYTES)],
  ])('POST /kill with %s works', async (_name, headers, body) => {
    app = await startTestApp();
    const res = await rawRequest(app.port, { method: 'POST', path: '/kill', headers, body });
    expect(res.status).toBe(202);
    expect(JSON.parse(res.body)).toEqual({ status: 'shutting_down', message: 'graceful shutdown started' });
  });

  it('refuses a body over the limit with 413 JSON, before the handler runs', async () => {
    app = await startTestApp();
    const res = await rawRequest(app.port, {
      method: 'POST',
      path: '/kill',
      headers: { 'content-type': 'application/json' },
      body: `"${'z'.repeat(MAX_BODY_BYTES)}"`,
    });
    const body = expectJsonError(res, 413, 'payload_too_large');
    expect(body.message).toBe(`no endpoint takes a body; bodies over ${MAX_BODY_BYTES} bytes are refused`);
    expect(app.kills()).toBe(0);
  });

  it('refuses a chunked body that grows over the limit with 413 JSON', async () => {
    app = await startTestApp();
    const chunk = 'c'.repeat(512);
    const res = await rawRequest(app.port, {
      method: 'POST',
      path: '/crank/once',
      headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' },
      body: [chunk, chunk, chunk],
    });
    expectJsonError(res, 413, 'payload_too_large');
  });

  it('answers a malformed content-type with a 4xx JSON error, never 500', async () => {
    app = await startTestApp();
    const res = await rawRequest(app.port, { method: 'POST', path: '/kill', headers: { 'content-type': '/;;;' }, body: 'x' });
    expectJsonError(res, 415, 'unsupported_media_type');
  });

  it('ignores a body on the disabled crank too: the answer is the 409, not a body error', async () => {
    app = await startTestApp();
    const res = await rawRequest(app.port, { method: 'POST', path: '/crank/once', headers: { 'content-type': 'application/json' }, body: '' });
    expectJsonError(res, 409, 'crank_disabled');
  });
});

describe('unknown routes and methods', () => {
  it.each([
    ['GET', '/nope'],
    ['POST', '/crank'],
    ['GET', '/health/extra'],
    ['DELETE', '/'],
  ])('%s %s is a 404 JSON error listing the routes', async (method, path) => {
    app = await startTestApp();
    const body = expectJsonError(await rawRequest(app.port, { method, path }), 404, 'not_found');
    expect(body.message).toBe(
      `no route ${method} ${path}; routes: GET /health, GET /metrics, POST /crank/once, POST /crank/poll, POST /kill, GET /transfers, GET /transfers/:index, GET /crank/ui, GET /crank/machine, GET /crank/activity`,
    );
  });

  it.each([
    ['GET', '/kill', 'POST', 'POST'],
    ['GET', '/crank/once', 'POST', 'POST'],
    ['PUT', '/crank/once', 'POST', 'POST'],
    ['POST', '/health', 'GET or HEAD', 'GET, HEAD'],
    ['DELETE', '/metrics', 'GET or HEAD', 'GET, HEAD'],
  ])('%s %s is a 405 JSON error saying to use %s', async (method, path, allowed, allowHeader) => {
    app = await startTestApp();
    const res = await rawRequest(app.port, { method, path: `${path}?x=1` });
    const body = expectJsonError(res, 405, 'method_not_allowed');
    expect(body.message).toBe(`${method} ${path} is not supported; use ${allowed}`);
    expect(res.headers.allow).toBe(allowHeader);
    expect(app.kills()).toBe(0);
  });

  it('does not echo a very long path in full', async () => {
    app = await startTestApp();
    const path = `/${'a'.repeat(500)}`;
    const body = expectJsonError(await rawRequest(app.port, { method: 'GET', path }), 404, 'not_found');
    expect(body.message).toContain(`${path.slice(0, 100)}...`);
    // The rest of the message is the route list, whatever its length: only 100 characters of the path.
    expect(body.message).not.toContain(path.slice(0, 101));
  });
});
