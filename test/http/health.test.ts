import { afterEach, describe, expect, it } from 'vitest';
import { DISABLED_CRANK_HEALTH } from '../../src/machines/health.js';
import { ControlledCrank } from '../support/controlled-crank.js';
import { basicAuth, startTestApp, type TestApp } from '../support/http-app.js';

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('GET /health', () => {
  it('answers BridgeHealthSnapshot exactly, before any cycle, with the crank disabled', async () => {
    app = await startTestApp();
    const res = await fetch(`${app.url}/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await res.json()).toEqual({
      status: 'ok',
      service: 'bridge-operator-server',
      crank: {
        enabled: false,
        last_run_at: null,
        last_success_at: null,
        last_error: null,
        last_action: null,
        total_actions_submitted: 0,
      },
    });
  });

  it("serves the crank's snapshot in snake_case and nothing else", async () => {
    const crank = new ControlledCrank();
    crank.snapshot = {
      enabled: true,
      last_run_at: 1_795_000_000,
      last_success_at: 1_794_999_990,
      last_error: 'ack_withdraw failed after 3 attempts: source sendTransaction timed out',
      last_action: 'ack_deposit entries 4..6 landed (5Kx...)',
      total_actions_submitted: 42,
      // Anything else the crank's object carries stays off the wire.
      ...({ internalState: 'busy' } as object),
    };
    app = await startTestApp({ crank });
    const body = (await (await fetch(`${app.url}/health`)).json()) as Record<string, unknown>;
    expect(body).toEqual({
      status: 'ok',
      service: 'bridge-operator-server',
      crank: {
        enabled: true,
        last_run_at: 1_795_000_000,
        last_success_at: 1_794_999_990,
        last_error: 'ack_withdraw failed after 3 attempts: source sendTransaction timed out',
        last_action: 'ack_deposit entries 4..6 landed (5Kx...)',
        total_actions_submitted: 42,
      },
    });
  });

  it('serializes a snapshot a little off its type instead of failing: a field no branch of the signer union has is dropped', async () => {
    const crank = new ControlledCrank();
    crank.snapshot = {
      ...crank.snapshot,
      enabled: true,
      role: 'active',
      role_since: null,
      // A branch of the signer union plus a field no branch has: the field is dropped, not a 500.
      signer: { kind: 'pkcs11', token: 'bridge', session: 'lost', ...({ pin: '1234' } as object) },
    };
    app = await startTestApp({ crank });
    const res = await fetch(`${app.url}/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { crank: Record<string, unknown> };
    expect(body.crank).toMatchObject({ role: 'active', role_since: null, signer: { kind: 'pkcs11', token: 'bridge', session: 'lost' } });
    expect(JSON.stringify(body)).not.toContain('1234');
  });

  it('names the checks that are off (status still ok), and only while some is', async () => {
    const crank = new ControlledCrank();
    const checksOff = [
      { check: 'second_signer' as const, chain: 'target' as const, reason: 'no RPC endpoint of the destination chain keeps transaction history' },
    ];
    crank.snapshot = { ...crank.snapshot, checks_off: checksOff };
    app = await startTestApp({ crank });
    const res = await fetch(`${app.url}/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; crank: Record<string, unknown> };
    expect(body.status).toBe('ok');
    expect(body.crank['checks_off']).toEqual(checksOff);
  });

  it('answers 200 for ok and degraded, 503 for stalled, with the same body shape', async () => {
    const crank = new ControlledCrank();
    app = await startTestApp({ crank });
    for (const [status, code] of [
      ['ok', 200],
      ['degraded', 200],
      ['stalled', 503],
    ] as const) {
      crank.healthStatus = status;
      crank.snapshot = { ...DISABLED_CRANK_HEALTH, enabled: true, last_error: status === 'ok' ? null : `why ${status}` };
      const res = await fetch(`${app.url}/health`);
      expect(res.status, status).toBe(code);
      expect(await res.json()).toEqual({ status, service: 'bridge-operator-server', crank: crank.snapshot });
    }
  });

  it('answers at once while a cycle runs (it reads a snapshot, never waits for the run lock)', async () => {
    const crank = new ControlledCrank();
    app = await startTestApp({ crank });
    const cycle = fetch(`${app.url}/crank/once`, { method: 'POST' });
    await crank.cyclesRequested(1);
    crank.snapshot = { ...DISABLED_CRANK_HEALTH, enabled: true, last_run_at: 1_795_000_100 };
    const health = await fetch(`${app.url}/health`, { signal: AbortSignal.timeout(2000) });
    expect(((await health.json()) as { crank: { last_run_at: number } }).crank.last_run_at).toBe(1_795_000_100);
    crank.finishNext({ ack_deposit_attempted: false, ack_withdraw_attempted: false, cleanup_attempted: 0, cleanup_completed: 0 });
    expect((await cycle).status).toBe(200);
  });

  it('is public even when admin auth is configured, and ignores credentials sent to it', async () => {
    app = await startTestApp({ auth: { username: 'ops', password: 'right' } });
    expect((await fetch(`${app.url}/health`)).status).toBe(200);
    expect((await fetch(`${app.url}/health`, { headers: { authorization: basicAuth('ops', 'wrong') } })).status).toBe(200);
    expect((await fetch(`${app.url}/metrics`)).status).toBe(200);
  });

  it('answers HEAD like GET, without a body', async () => {
    app = await startTestApp();
    const res = await fetch(`${app.url}/health`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });

  it('logs probes at debug level only, so that an info log is not flooded', async () => {
    app = await startTestApp();
    await fetch(`${app.url}/health`);
    const probeLines = app.logs.records().filter((r) => r.url === '/health');
    expect(probeLines).toEqual([expect.objectContaining({ level: 'debug', statusCode: 200, msg: 'request completed' })]);
  });
});
