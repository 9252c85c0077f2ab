import { Keypair } from '@solana/web3.js';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createChainRpc } from '../../../src/chain/rpc/chain-rpc.js';
import { parseRetryAfter, RETRY_AFTER_MAX_MS } from '../../../src/chain/rpc/rpc-failure.js';
import { createMetrics, type Metrics } from '../../../src/metrics/metrics.js';
import { captureLogs } from '../../support/log-capture.js';
import { metricSample } from '../../support/metric-value.js';
import { rejection } from '../../support/rejection.js';
import { startJsonRpcServer, type JsonRpcTestServer } from './json-rpc-test-server.js';

// Issue 33, item 1: one 429 with `Retry-After: 999999` took the endpoint out for 11 days.

let server: JsonRpcTestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const address = Keypair.fromSeed(new Uint8Array(32).fill(2)).publicKey;
const NOW = Date.parse('2026-11-27T07:00:00Z');

describe('parseRetryAfter clamps what a node asks for', () => {
  it.each([
    { header: '999999', ms: RETRY_AFTER_MAX_MS, problem: 'too_long' },
    { header: '9'.repeat(400), ms: RETRY_AFTER_MAX_MS, problem: 'too_long' },
    { header: 'Fri, 31 Dec 9999 23:59:59 GMT', ms: RETRY_AFTER_MAX_MS, problem: 'too_long' },
    { header: 'soon', ms: 0, problem: 'unreadable' },
    { header: '60', ms: 60_000, problem: undefined },
    { header: 'Fri, 27 Nov 2026 07:00:30 GMT', ms: 30_000, problem: undefined },
  ])('$header: $ms ms ($problem)', ({ header, ms, problem }) => {
    expect(parseRetryAfter(header, NOW)).toEqual({ ms, ...(problem === undefined ? {} : { problem }) });
  });
});

describe('an endpoint that asks for a wait of days', () => {
  async function setup() {
    let rateLimited = true;
    server = await startJsonRpcServer(() => {
      if (!rateLimited) return { result: { context: { slot: 5 }, value: 42 } };
      rateLimited = false;
      return { http: 429, headers: { 'retry-after': '999999' } };
    });
    let now = NOW;
    const metrics = createMetrics(new Registry());
    const logs = captureLogs('warn');
    const rpc = createChainRpc({ chain: 'source', url: server.url, timeoutMs: 2_000, metrics, logger: logs.logger, now: () => now });
    return { rpc, metrics, logs, server, advance: (ms: number) => void (now += ms) };
  }

  const up = (metrics: Metrics, url: string) => metricSample(metrics.rpcEndpointUp, { chain: 'source', endpoint: new URL(url).origin });

  it('is asked again after the ceiling, reads endpoint_up 0 meanwhile, and is logged once', async () => {
    const { rpc, metrics, logs, server, advance } = await setup();
    // The retry finds the endpoint waiting 60 s, beyond the read's budget: the read fails, saying why.
    const failure = (await rejection(rpc.getBalance(address, 'confirmed', new AbortController().signal))) as Error;
    expect(failure.message).toMatch(/asked for no calls for another 60 s \(Retry-After\)/);
    expect(server.calls).toHaveLength(1);
    expect(await up(metrics, server.url)).toBe(0);

    // 10 s left, more than the read's 8 s budget (3 x 2 s + 2 x 1 s) can wait.
    advance(RETRY_AFTER_MAX_MS - 10_000);
    await expect(rpc.getBalance(address, 'confirmed', new AbortController().signal)).rejects.toThrow(/another 10 s \(Retry-After\)/);
    expect(server.calls).toHaveLength(1);

    advance(10_000);

    advance(RETRY_AFTER_MAX_MS);
    await expect(rpc.getBalance(address, 'confirmed', new AbortController().signal)).resolves.toBe(42);
    expect(await up(metrics, server.url)).toBe(1);
    const warnings = logs.records().filter((line) => String(line.msg).includes('does not honour as sent'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ retryAfter: '999999', ceilingMs: RETRY_AFTER_MAX_MS });
    expect(String(warnings[0]!.msg)).toMatch(/waits at most 60 s/);
  });
});
