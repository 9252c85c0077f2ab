import { afterEach, describe, expect, it } from 'vitest';
import { MAX_QUOTED_HEADER_CHARS, MAX_QUOTED_URL_CHARS } from '../../src/http/quoted-request.js';
import { startTestApp, type TestApp } from '../support/http-app.js';

// Issue 33, item 7: a 16 KB request URL was logged whole; 200 such requests wrote 3.2 MB of log.

let app: TestApp | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

// Just under Node's 16 KiB limit of the request head (beyond, 431 and no route is reached).
const LONG_PATH = `/${'a'.repeat(16 * 1024 - 200)}`;

describe('request logs quote a bounded part of the request', () => {
  it('200 requests with a 16 KB URL (the most Node reads) write a bounded log, each URL cut and its rest counted', async () => {
    app = await startTestApp();
    for (let i = 0; i < 200; i++) {
      const response = await fetch(`${app.url}${LONG_PATH}`);
      expect(response.status).toBe(404);
      await response.arrayBuffer();
    }
    const lines = app.logs.records().filter((line) => line.msg === 'request completed');
    expect(lines).toHaveLength(200);
    for (const line of lines) {
      expect(line.url).toBe(`${LONG_PATH.slice(0, MAX_QUOTED_URL_CHARS)}… (${LONG_PATH.length - MAX_QUOTED_URL_CHARS} more)`);
    }
    // 200 lines of about 700 bytes, where each carried 16 KB before.
    expect(app.logs.text().length).toBeLessThan(200 * 1024);
  });

  it('a refused admin request quotes its Host and Origin headers cut, in the log and the answer', async () => {
    app = await startTestApp();
    const origin = `http://${'o'.repeat(8 * 1024)}.example`;
    const response = await fetch(`${app.url}/crank/ui`, { headers: { origin } });
    expect(response.status).toBe(403);
    const { message } = (await response.json()) as { message: string };
    expect(message).toContain(`${origin.slice(0, MAX_QUOTED_HEADER_CHARS)}… (${origin.length - MAX_QUOTED_HEADER_CHARS} more)`);
    const refused = app.logs.records().find((line) => line.msg === 'admin request refused: cross-site');
    expect(JSON.stringify(refused).length).toBeLessThan(1024);
  });
});
