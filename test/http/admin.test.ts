import { afterEach, describe, expect, it } from 'vitest';
import { BridgeError } from '../../src/errors.js';
import { ControlledCrank } from '../support/controlled-crank.js';
import { basicAuth, rawRequest, startTestApp, type TestApp } from '../support/http-app.js';

const CREDENTIALS = { username: 'bridge-ops', password: 'correct horse battery staple' };
const UNAUTHORIZED = { error: 'unauthorized', message: 'admin endpoints require HTTP Basic credentials (realm "bridge-admin")' };
const REPORT = { ack_deposit_attempted: true, ack_withdraw_attempted: false, cleanup_attempted: 3, cleanup_completed: 2 };

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('POST /crank/poll', () => {
  it('answers 202 with whether the nudge started a cycle or joined the running one', async () => {
    const crank = new ControlledCrank();
    app = await startTestApp({ crank });
    const started = await fetch(`${app.url}/crank/poll`, { method: 'POST' });
    expect(started.status).toBe(202);
    expect(await started.json()).toEqual({ status: 'started', role: 'active' });
    crank.pollOutcome = 'coalesced';
    const coalesced = await fetch(`${app.url}/crank/poll`, { method: 'POST' });
    expect(await coalesced.json()).toEqual({ status: 'coalesced', role: 'active' });
    expect(crank.polls).toBe(2);
  });

  it('says while standing by from when the crank may sign', async () => {
    const crank = new ControlledCrank();
    crank.roleView = { role: 'standby', may_sign_at: 1_795_000_055 };
    app = await startTestApp({ crank });
    const res = await fetch(`${app.url}/crank/poll`, { method: 'POST' });
    expect(await res.json()).toEqual({ status: 'started', role: 'standby', may_sign_at: 1_795_000_055 });
  });

  it('answers 409 when the crank is disabled', async () => {
    app = await startTestApp();
    const res = await fetch(`${app.url}/crank/poll`, { method: 'POST' });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: string }).error).toBe('crank_disabled');
  });

  it('requires the admin credentials when auth is configured', async () => {
    const crank = new ControlledCrank();
    app = await startTestApp({ crank, auth: CREDENTIALS });
    const res = await fetch(`${app.url}/crank/poll`, { method: 'POST' });
    expect(res.status).toBe(401);
    expect(crank.polls).toBe(0);
  });
});

describe('POST /crank/once', () => {
  it('answers 409 with a JSON error saying runtime configuration is absent when the crank is disabled', async () => {
    app = await startTestApp();
    const res = await fetch(`${app.url}/crank/once`, { method: 'POST' });
    expect(res.status).toBe(409);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await res.json()).toEqual({
      error: 'crank_disabled',
      message:
        'the crank is disabled because runtime configuration is absent (set BRIDGE_SOURCE_RPC_URL, BRIDGE_TARGET_RPC_URL, ' +
        'BRIDGE_SOURCE_CHAIN_ID, BRIDGE_TARGET_CHAIN_ID and BRIDGE_AUTHORITY_KEYPAIR, then restart)',
    });
  });

  it("answers CrankReportResponse with the cycle's report, exactly its four fields, and the role beside them", async () => {
    const crank = new ControlledCrank();
    app = await startTestApp({ crank });
    const response = fetch(`${app.url}/crank/once`, { method: 'POST' });
    await crank.cyclesRequested(1);
    crank.finishNext({ ...REPORT, ...({ signatures: ['x'] } as object) });
    const res = await response;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ...REPORT, role: 'active' });
  });

  it('says while standing by from when the crank may sign, so that nothing attempted is not read as no work', async () => {
    const crank = new ControlledCrank();
    crank.roleView = { role: 'standby', may_sign_at: 1_795_000_055 };
    app = await startTestApp({ crank });
    const response = fetch(`${app.url}/crank/once`, { method: 'POST' });
    await crank.cyclesRequested(1);
    crank.finishNext(REPORT);
    expect(await (await response).json()).toEqual({ ...REPORT, role: 'standby', may_sign_at: 1_795_000_055 });
  });

  it('gives each of two concurrent callers the report of its own cycle', async () => {
    const crank = new ControlledCrank();
    app = await startTestApp({ crank });
    const first = fetch(`${app.url}/crank/once`, { method: 'POST' });
    await crank.cyclesRequested(1);
    const second = fetch(`${app.url}/crank/once`, { method: 'POST' });
    await crank.cyclesRequested(2);
    crank.finishNext({ ...REPORT, cleanup_attempted: 1 });
    crank.finishNext({ ...REPORT, cleanup_attempted: 2 });
    expect(((await (await first).json()) as typeof REPORT).cleanup_attempted).toBe(1);
    expect(((await (await second).json()) as typeof REPORT).cleanup_attempted).toBe(2);
  });

  it('withdraws a queued request whose client hung up, and logs it without an error', async () => {
    const crank = new ControlledCrank();
    app = await startTestApp({ crank });
    const client = new AbortController();
    const gone = fetch(`${app.url}/crank/once`, { method: 'POST', signal: client.signal }).catch((err: unknown) => err);
    await crank.cyclesRequested(1);
    client.abort();
    expect(await gone).toMatchObject({ name: 'AbortError' });
    await crank.requestsAbandoned(1);
    const stillServing = await fetch(`${app.url}/health`);
    expect(stillServing.status).toBe(200);
    const requestLines = app.logs.records().filter((r) => r.reqId !== undefined);
    expect(requestLines.filter((r) => r.level === 'error' || r.level === 'warn')).toEqual([]);
    expect(app.logs.records()).toContainEqual(
      expect.objectContaining({ level: 'debug', reason: 'the client closed the connection before its crank report was ready' }),
    );
  });

  it('answers 503 once the crank is stopping', async () => {
    const crank = new ControlledCrank();
    app = await startTestApp({ crank });
    const response = fetch(`${app.url}/crank/once`, { method: 'POST' });
    await crank.cyclesRequested(1);
    crank.failNext(new BridgeError('CRANK__STOPPED', {}, { when: 'stopping' }));
    const res = await response;
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: 'shutting_down', message: 'the crank is stopping or stopped and runs no more cycles' });
  });

  it('answers 500 with a request id and logs the error when a cycle throws unexpectedly', async () => {
    const crank = new ControlledCrank();
    app = await startTestApp({ crank });
    const response = fetch(`${app.url}/crank/once`, { method: 'POST' });
    await crank.cyclesRequested(1);
    crank.failNext(new TypeError('cannot read properties of undefined (internal detail)'));
    const res = await response;
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: string; message: string };
    expect(body.error).toBe('internal_error');
    expect(body.message).toMatch(/^internal error; the server log has the details under request id \S+$/);
    expect(body.message).not.toContain('internal detail');
    const requestId = body.message.split(' ').pop();
    const logged = app.logs.records().find((r) => r.msg === 'request failed' && r.err !== undefined);
    expect(logged).toMatchObject({
      level: 'error',
      reqId: requestId,
      err: { type: 'TypeError', message: expect.stringContaining('internal detail') },
    });
  });
});

describe('POST /kill', () => {
  it('answers 202 JSON, then asks for shutdown once the answer is sent', async () => {
    app = await startTestApp();
    const res = await fetch(`${app.url}/kill`, { method: 'POST' });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ status: 'shutting_down', message: 'graceful shutdown started' });
    expect(app.kills()).toBe(1);
    expect(app.logs.records()).toContainEqual(expect.objectContaining({ level: 'info', msg: 'shutdown requested by POST /kill' }));
  });
});

describe('admin auth', () => {
  async function post(path: string, authorization?: string) {
    if (app === undefined) throw new Error('no app');
    return rawRequest(app.port, { method: 'POST', path, headers: authorization === undefined ? {} : { authorization } });
  }

  it.each([
    ['no credentials', undefined],
    ['a wrong user', basicAuth('someone-else', CREDENTIALS.password)],
    ['a wrong password', basicAuth(CREDENTIALS.username, 'correct horse battery stapler')],
    ['an empty password', basicAuth(CREDENTIALS.username, '')],
    ['both wrong', basicAuth('x', 'y')],
    ['user and password swapped', basicAuth(CREDENTIALS.password, CREDENTIALS.username)],
    ['another scheme', 'Bearer abc.def'],
    ['malformed base64', 'Basic !!!not-base64'],
    ['no colon', `Basic ${Buffer.from('bridge-ops').toString('base64')}`],
  ])('refuses %s with the same 401 on both admin endpoints', async (_name, authorization) => {
    app = await startTestApp({ crank: new ControlledCrank(), auth: CREDENTIALS });
    for (const path of ['/crank/once', '/kill']) {
      const res = await post(path, authorization);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Basic realm="bridge-admin", charset="UTF-8"');
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(JSON.parse(res.body)).toEqual(UNAUTHORIZED);
    }
    expect(app.kills()).toBe(0);
    // No credentials at all is a browser asking the user for them (the crank page's first request): info, not a warn.
    const expected =
      authorization === undefined
        ? { level: 'info', msg: 'admin request without credentials: answered 401, asking for them' }
        : { level: 'warn', msg: 'admin request refused: authentication failed' };
    expect(
      app.logs
        .records()
        .filter((r) => r.statusCode === 401)
        .map((r) => ({ level: r.level, msg: r.msg })),
    ).toEqual([expected, expected]);
    expect(app.logs.text()).not.toContain(CREDENTIALS.password);
  });

  it('accepts the right credentials, including non-ASCII ones sent as UTF-8', async () => {
    const credentials = { username: 'opérateur', password: 'pässwörd:with:colons' };
    const crank = new ControlledCrank();
    app = await startTestApp({ crank, auth: credentials });
    const cycle = post('/crank/once', basicAuth(credentials.username, credentials.password));
    await crank.cyclesRequested(1);
    crank.finishNext(REPORT);
    expect((await cycle).status).toBe(200);
    const kill = await post('/kill', basicAuth(credentials.username, credentials.password));
    expect(kill.status).toBe(202);
    expect(app.kills()).toBe(1);
  });

  it('never logs the Authorization header', async () => {
    app = await startTestApp({ auth: CREDENTIALS });
    await post('/kill', basicAuth(CREDENTIALS.username, 'wrong-password-123'));
    await post('/kill', basicAuth(CREDENTIALS.username, CREDENTIALS.password));
    const text = app.logs.text();
    expect(text).not.toContain(Buffer.from(`${CREDENTIALS.username}:`).toString('base64').slice(0, 12));
    expect(text).not.toContain('wrong-password-123');
  });

  it('without auth configured, serves admin endpoints without credentials and warns once at startup', async () => {
    app = await startTestApp();
    const warnings = app.logs.records().filter((r) => r.level === 'warn');
    expect(warnings).toEqual([
      expect.objectContaining({
        msg: 'admin endpoints (POST /crank/once, POST /crank/poll, POST /kill, GET /transfers, GET /crank/ui) have no authentication: they rely on ingress restriction (SPEC §5)',
      }),
    ]);
    expect((await post('/kill')).status).toBe(202);
    expect((await post('/kill', basicAuth('any', 'thing'))).status).toBe(202);
  });

  it('with auth configured, does not warn about ingress', async () => {
    app = await startTestApp({ auth: CREDENTIALS });
    expect(app.logs.records().filter((r) => r.level === 'warn')).toEqual([]);
  });
});
