import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchHealth, HEALTH_TIMEOUT_MS, MAX_HEALTH_BYTES } from '../../src/ops/health.js';
import { escapeUnsafeCharacters } from '../../src/text.js';

/**
 * `ops escalate --health URL` against hostile /health servers on loopback: an endless body,
 * a redirect, credentials and a token in the URL, terminal control characters in the answer.
 */

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)));
  server = undefined;
});

async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('fetchHealth', () => {
  it(`stops reading an endless body past ${MAX_HEALTH_BYTES} bytes, well within ${HEALTH_TIMEOUT_MS} ms`, async () => {
    let sent = 0;
    const origin = await serve((_request, response) => {
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const pump = () => {
        while (!response.destroyed && response.write(chunk)) sent += chunk.length;
      };
      response.on('drain', pump);
      pump();
    });
    const started = Date.now();
    const health = await fetchHealth(`${origin}/health`);
    expect(Date.now() - started).toBeLessThan(HEALTH_TIMEOUT_MS);
    expect(health).toMatchObject({
      origin,
      value: null,
      error: expect.stringMatching(new RegExp(`^the answer from ${origin} is over ${MAX_HEALTH_BYTES} bytes; refused after \\d+$`)),
    });
    // Refused while streaming: far less than a 3 GiB body reached the client.
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });

  it('does not follow a redirect and says where it pointed', async () => {
    let followed = false;
    const origin = await serve((request, response) => {
      if (request.url === '/elsewhere') followed = true;
      response.writeHead(302, { location: 'http://other.example:9/health' }).end();
    });
    expect(await fetchHealth(`${origin}/health`)).toEqual({
      origin,
      value: null,
      error: `HTTP 302 from ${origin}: a redirect to http://other.example:9, not followed`,
    });
    expect(followed).toBe(false);
  });

  it('sends user:password@ as a Basic header and shows the URL by its origin only', async () => {
    let authorization: string | undefined;
    let path: string | undefined;
    const origin = await serve((request, response) => {
      authorization = request.headers.authorization;
      path = request.url;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    });
    const health = await fetchHealth(`${origin.replace('http://', 'http://user:secret-pass@')}/health?token=secret-token`);
    expect(health).toEqual({ origin, value: { status: 'ok' }, error: null });
    expect(authorization).toBe(`Basic ${Buffer.from('user:secret-pass').toString('base64')}`);
    expect(path).toBe('/health?token=secret-token');
    const failed = await fetchHealth('http://user:secret-pass@127.0.0.1:9/health?token=secret-token');
    expect(failed.origin).toBe('http://127.0.0.1:9');
    expect(JSON.stringify(failed)).not.toMatch(/secret/);
  });

  it('an answer with C1, bidi and line-separator characters reaches the terminal escaped', async () => {
    const origin = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok\u009b31m\u202egnp.exe\u2028forged line' }));
    });
    const health = await fetchHealth(`${origin}/health`);
    const printed = escapeUnsafeCharacters(JSON.stringify(health, null, 2));
    expect(printed).not.toMatch(/[\u0080-\u009f\u202a-\u202e\u2028\u2029]/);
    expect(printed).toContain('ok\\u009b31m\\u202egnp.exe\\u2028forged line');
    // Still JSON, with the same value.
    expect(JSON.parse(printed)).toEqual(health);
  });
});
