import { afterEach, describe, expect, it } from 'vitest';
import { basicAuth, startTestApp, type TestApp } from '../support/http-app.js';

/**
 * Who asked for what (issue 50): every admin request, accepted or refused, leaves exactly one
 * `audit` line with the address, the Basic user name (never the password), what and the
 * outcome; public endpoints and the crank page's own polls leave none.
 */

const CREDENTIALS = { username: 'ops-alice', password: 'pw-Zq8!never-logged' };

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

function auditLines(test: TestApp): Array<Record<string, unknown>> {
  return test.logs.records().filter((record) => record['msg'] === 'audit');
}

describe('audit lines of admin requests', () => {
  it('one line per admin request, accepted or refused, naming user, address, what and outcome; none for public paths; never the password', async () => {
    // A refused request names no user: its "name" may be the password typed in the wrong field.
    // The disabled crank answers its endpoints 409: an outcome like any other.
    app = await startTestApp({ auth: CREDENTIALS });
    const auth = { authorization: basicAuth(CREDENTIALS.username, CREDENTIALS.password) };
    const wrong = { authorization: basicAuth('mallory', 'guess') };
    const requests: Array<[string, string, Record<string, string>, number]> = [
      ['POST', '/crank/once', auth, 409],
      ['POST', '/crank/poll', auth, 409],
      ['GET', '/transfers', auth, 409],
      ['GET', '/crank/ui', auth, 200],
      ['POST', '/crank/poll', wrong, 401],
      ['POST', '/kill', {}, 401],
    ];
    for (const [method, path, headers, status] of requests) {
      const res = await fetch(`${app.url}${path}`, { method, headers });
      expect(res.status, `${method} ${path}`).toBe(status);
      await res.arrayBuffer();
    }
    for (const path of ['/health', '/metrics', '/crank/activity']) await (await fetch(`${app.url}${path}`, { headers: auth })).arrayBuffer();
    await app.close();

    const lines = auditLines(app);
    expect(lines.map((line) => line['audit'])).toEqual([
      { address: '127.0.0.1', user: 'ops-alice', what: 'POST /crank/once', outcome: 409 },
      { address: '127.0.0.1', user: 'ops-alice', what: 'POST /crank/poll', outcome: 409 },
      { address: '127.0.0.1', user: 'ops-alice', what: 'GET /transfers', outcome: 409 },
      { address: '127.0.0.1', user: 'ops-alice', what: 'GET /crank/ui', outcome: 200 },
      { address: '127.0.0.1', user: null, what: 'POST /crank/poll', outcome: 401 },
      { address: '127.0.0.1', user: null, what: 'POST /kill', outcome: 401 },
    ]);
    for (const line of lines) expect(typeof line['time']).toBe('string');
    const text = app.logs.text();
    for (const secret of [CREDENTIALS.password, 'guess', Buffer.from(`${CREDENTIALS.username}:${CREDENTIALS.password}`).toString('base64')])
      expect(text).not.toContain(secret);
  });

  it('a swapped user and password leave the password nowhere, and without auth configured no user is named', async () => {
    app = await startTestApp({ auth: CREDENTIALS });
    await (
      await fetch(`${app.url}/kill`, { method: 'POST', headers: { authorization: basicAuth(CREDENTIALS.password, CREDENTIALS.username) } })
    ).arrayBuffer();
    await app.close();
    expect(auditLines(app).map((line) => line['audit'])).toEqual([{ address: '127.0.0.1', user: null, what: 'POST /kill', outcome: 401 }]);
    expect(app.logs.text()).not.toContain(CREDENTIALS.password);

    app = await startTestApp();
    await (await fetch(`${app.url}/transfers`, { headers: { authorization: basicAuth('someone', 'secret-Q') } })).arrayBuffer();
    await app.close();
    expect(auditLines(app).map((line) => line['audit'])).toEqual([{ address: '127.0.0.1', user: null, what: 'GET /transfers', outcome: 409 }]);
    expect(app.logs.text()).not.toContain('secret-Q');
  });
});
