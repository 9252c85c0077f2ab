import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { type BridgeError, isBridgeError } from '../../../src/errors.js';
import { createMetrics, type Metrics } from '../../../src/metrics/metrics.js';
import { createRpcFetch, rpcMethodOf, withCallSignal } from '../../../src/chain/rpc/rpc-fetch.js';
import { startJsonRpcServer, type Handler, type JsonRpcTestServer } from './json-rpc-test-server.js';
import { retriesAction } from '../../../src/failure-policy.js';
import { waitFor } from '../../support/wait-for.js';
import { metricValue } from '../../support/metric-value.js';

let server: JsonRpcTestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(handler: Handler, timeoutMs = 2_000) {
  server = await startJsonRpcServer(handler);
  const metrics = createMetrics(new Registry());
  const rpcFetch = createRpcFetch({ chain: 'source', timeoutMs, metrics });
  const url = `${server.url}?api-key=SECRET-KEY`;
  const post = (method: string, init: RequestInit = {}) =>
    rpcFetch(url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }), ...init });
  return { metrics, post };
}

async function durationCount(metrics: Metrics, method: string): Promise<number> {
  const { values } = await metrics.rpcDuration.get();
  return values.find((v) => v.metricName === 'bridge_rpc_request_duration_seconds_count' && v.labels.method === method)?.value ?? 0;
}

async function failureOf(promise: Promise<unknown>): Promise<BridgeError> {
  try {
    await promise;
  } catch (err) {
    if (isBridgeError(err, 'CHAIN__RPC_FAILED')) return err;
    throw err;
  }
  throw new Error('expected CHAIN__RPC_FAILED, the call succeeded');
}

describe('createRpcFetch', () => {
  it('passes a JSON-RPC result through and records the request and its latency', async () => {
    const { metrics, post } = await setup(() => ({ result: 42 }));
    const response = await post('getSlot');
    expect(await response.json()).toMatchObject({ result: 42 });
    expect(await metricValue(metrics.rpcRequests, { chain: 'source', method: 'getSlot' })).toBe(1);
    expect(await metricValue(metrics.rpcErrors, {})).toBe(0);
    expect(await durationCount(metrics, 'getSlot')).toBe(1);
  });

  it('returns a JSON-RPC error body to the caller and counts it as kind rpc', async () => {
    const { metrics, post } = await setup(() => ({ error: { code: -32005, message: 'Node is behind' } }));
    const response = await post('getBalance');
    expect(await response.json()).toMatchObject({ error: { code: -32005 } });
    expect(await metricValue(metrics.rpcErrors, { method: 'getBalance', kind: 'rpc' })).toBe(1);
  });

  it.each<{ status: number; transient: boolean; headers: Record<string, string>; text: RegExp; retryAfterMs?: number }>([
    { status: 429, transient: true, headers: { 'retry-after': '3' }, text: /HTTP 429 Too Many Requests \(Retry-After: 3\)/, retryAfterMs: 3_000 },
    { status: 503, transient: true, headers: {}, text: /HTTP 503/ },
    { status: 500, transient: true, headers: {}, text: /HTTP 500/ },
    { status: 400, transient: false, headers: {}, text: /HTTP 400/ },
    { status: 401, transient: true, headers: {}, text: /HTTP 401 .*refuses the server: check its key or allow-list/ },
    { status: 403, transient: true, headers: {}, text: /HTTP 403 .*the call moves to the next endpoint/ },
  ])('HTTP $status -> CHAIN__RPC_FAILED, transient $transient', async ({ status, transient, headers, text, retryAfterMs }) => {
    const { metrics, post } = await setup(() => ({ http: status, headers, body: 'nope' }));
    const err = await failureOf(post('getAccountInfo'));
    const retryAfter = retryAfterMs === undefined ? {} : { retryAfterMs };
    expect(err.context).toEqual({ chain: 'source', method: 'getAccountInfo', kind: 'http', status, ...retryAfter });
    expect(retriesAction(err)).toBe(transient);
    expect(err.message).toMatch(text);
    expect(err.message).toContain('getAccountInfo on the source chain RPC (BRIDGE_SOURCE_RPC_URL) failed');
    expect(err.message).not.toContain('SECRET-KEY');
    expect(await metricValue(metrics.rpcErrors, { method: 'getAccountInfo', kind: 'http' })).toBe(1);
  });

  it('answers a redirect as the failure it is and never follows it: the request goes nowhere else', async () => {
    const elsewhere = await startJsonRpcServer(() => ({ result: 'followed' }));
    try {
      const { post } = await setup(() => ({ http: 307, headers: { location: elsewhere.url } }));
      const err = await failureOf(post('sendTransaction'));
      expect(err.context).toMatchObject({ kind: 'http', status: 307 });
      expect(elsewhere.calls).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });

  it.each([
    ['not JSON', '<html>bad gateway</html>'],
    ['JSON but not JSON-RPC', '{"hello":"world"}'],
    ['truncated JSON', '{"jsonrpc":"2.0","id":1,"result":{"va'],
  ])('a body that is %s -> retryable, kind malformed', async (_name, raw) => {
    const { metrics, post } = await setup(() => ({ raw }));
    const err = await failureOf(post('getLatestBlockhash'));
    expect(retriesAction(err)).toBe(true);
    expect(err.message).toMatch(/the response is not a JSON-RPC response/);
    expect(await metricValue(metrics.rpcErrors, { method: 'getLatestBlockhash', kind: 'malformed' })).toBe(1);
  });

  it('times out a node that does not answer -> retryable, kind timeout', async () => {
    const { metrics, post } = await setup(() => ({ hang: true }), 150);
    const started = Date.now();
    const err = await failureOf(post('getSignatureStatuses'));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(retriesAction(err)).toBe(true);
    expect(err.message).toMatch(/no response within 150 ms \(BRIDGE_RPC_TIMEOUT_MS\)/);
    expect(await metricValue(metrics.rpcErrors, { method: 'getSignatureStatuses', kind: 'timeout' })).toBe(1);
    expect(await durationCount(metrics, 'getSignatureStatuses')).toBe(1);
  });

  it('a dropped connection -> retryable, kind network', async () => {
    const { metrics, post } = await setup(() => ({ drop: true }));
    const err = await failureOf(post('sendTransaction'));
    expect(retriesAction(err)).toBe(true);
    expect(err.message).toMatch(/network error/);
    expect(await metricValue(metrics.rpcErrors, { method: 'sendTransaction', kind: 'network' })).toBe(1);
  });

  it('a refused connection -> retryable, kind network', async () => {
    const closed = await startJsonRpcServer(() => ({ result: null }));
    await closed.close();
    const metrics = createMetrics(new Registry());
    const rpcFetch = createRpcFetch({ chain: 'target', timeoutMs: 1_000, metrics });
    const err = await failureOf(rpcFetch(closed.url, { method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"getHealth"}' }));
    expect(err.context).toMatchObject({ chain: 'target', method: 'getHealth', kind: 'network' });
    expect(err.message).toContain('destination chain RPC (BRIDGE_TARGET_RPC_URL)');
    expect(await metricValue(metrics.rpcErrors, { chain: 'target', kind: 'network' })).toBe(1);
  });

  it('an abort by the caller (withCallSignal) cancels the request promptly and is not a node error', async () => {
    const { metrics, post } = await setup(() => ({ hang: true }), 10_000);
    const controller = new AbortController();
    const reason = new Error('shutting down');
    const pending = withCallSignal(controller.signal, () => post('getAccountInfo'));
    await waitFor(() => server?.hanging === 1, { timeoutMs: 2_000, what: 'the request to reach the hanging server', intervalMs: 10 });
    const started = Date.now();
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(1_000);
    await waitFor(() => server?.hanging === 0, { timeoutMs: 2_000, what: 'the hanging request to be released', intervalMs: 10 });
    expect(await metricValue(metrics.rpcErrors, {})).toBe(0);
  });

  it('an init.signal also aborts, and an already aborted signal sends nothing', async () => {
    const { metrics, post } = await setup(() => ({ result: 1 }));
    const reason = new Error('already gone');
    await expect(post('getSlot', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(server?.calls).toHaveLength(0);
    expect(await metricValue(metrics.rpcRequests, {})).toBe(0);
  });
});

describe('rpcMethodOf', () => {
  it.each([
    ['{"jsonrpc":"2.0","id":1,"method":"getBalance","params":[]}', 'getBalance'],
    ['[{"method":"a"},{"method":"b"}]', 'batch'],
    ['not json', 'unknown'],
    ['{"id":1}', 'unknown'],
    [undefined, 'unknown'],
  ])('%s -> %s', (body, method) => {
    expect(rpcMethodOf(body)).toBe(method);
  });
});
