import { ConstantBackoff, type IRetryBackoffContext } from 'cockatiel';
import { Keypair } from '@solana/web3.js';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { isBridgeError } from '../../../src/errors.js';
import { createMetrics, type Metrics } from '../../../src/metrics/metrics.js';
import { createChainRpc } from '../../../src/chain/rpc/chain-rpc.js';
import {
  FLOOR_REFUSAL_ATTEMPTS,
  READ_ATTEMPTS,
  READ_BACKOFF_MAX_MS,
  RetryAfterBackoff,
  readCallBudgetMs,
} from '../../../src/chain/rpc/read-retry.js';
import { parseRetryAfter, rpcFailure } from '../../../src/chain/rpc/rpc-failure.js';
import { startJsonRpcServer, type Handler, type JsonRpcTestServer, type Reply } from './json-rpc-test-server.js';
import { retriesAction } from '../../../src/failure-policy.js';

let server: JsonRpcTestServer | undefined;
let metrics: Metrics;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const address = Keypair.fromSeed(new Uint8Array(32).fill(2)).publicKey;
const balance = { result: { context: { slot: 5 }, value: 42 } };
const signal = () => new AbortController().signal;

async function setup(handler: Handler, timeoutMs = 2_000) {
  server = await startJsonRpcServer(handler);
  metrics = createMetrics(new Registry());
  return createChainRpc({ chain: 'source', url: server.url, timeoutMs, metrics });
}

/** Replies in order, the last one repeated. */
function script(...replies: Reply[]): Handler {
  let next = 0;
  return () => replies[Math.min(next++, replies.length - 1)]!;
}

async function retries(method: string): Promise<number> {
  const metric = await metrics.rpcRetries.get();
  return metric.values.find((value) => value.labels.method === method)?.value ?? 0;
}

describe('idempotent reads are retried', () => {
  it('two HTTP 429 then an answer: the read succeeds, two retries counted', async () => {
    const rpc = await setup(script({ http: 429 }, { http: 429 }, balance));
    expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(42);
    expect(server?.calls).toHaveLength(3);
    expect(await retries('getBalance')).toBe(2);
  });

  it.each([
    { name: 'HTTP 503', reply: { http: 503 } },
    { name: 'node behind (-32005)', reply: { error: { code: -32005, message: 'Node is behind by 40 slots' } } },
    { name: 'minContextSlot not reached (-32016)', reply: { error: { code: -32016, message: 'Minimum context slot has not been reached' } } },
    { name: 'a dropped connection', reply: { drop: true as const } },
  ])('$name once, then an answer: one retry', async ({ reply }) => {
    const rpc = await setup(script(reply, balance));
    expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(42);
    expect(await retries('getBalance')).toBe(1);
  });

  it('a load balancer half of whose answers refuse the floor (-32016): up to FLOOR_REFUSAL_ATTEMPTS tries, other failures keep READ_ATTEMPTS', async () => {
    const floorRefused = { error: { code: -32016, message: 'Minimum context slot has not been reached' } };
    const refusals = Array.from({ length: FLOOR_REFUSAL_ATTEMPTS - 1 }, () => floorRefused);
    let rpc = await setup(script(...refusals, balance));
    expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(42);
    expect(server?.calls).toHaveLength(FLOOR_REFUSAL_ATTEMPTS);
    await server?.close();
    rpc = await setup(script(floorRefused));
    await expect(rpc.getBalance(address, 'confirmed', signal())).rejects.toThrow(/-32016/);
    expect(server?.calls).toHaveLength(FLOOR_REFUSAL_ATTEMPTS);
    await server?.close();
    // Floor refusals between them do not lend other failures attempts of their own.
    rpc = await setup(script({ http: 503 }, floorRefused, { http: 503 }, floorRefused, { http: 503 }, balance));
    await expect(rpc.getBalance(address, 'confirmed', signal())).rejects.toThrow(/503/);
    expect(server?.calls).toHaveLength(READ_ATTEMPTS + 2);
  }, 20_000);

  it('a timeout is retried, and a read that never gets an answer ends within readCallBudgetMs', async () => {
    const timeoutMs = 150;
    const rpc = await setup(() => ({ hang: true }), timeoutMs);
    const started = performance.now();
    const err = await rpc.getChainHeight('confirmed', signal()).catch((error: unknown) => error);
    const elapsed = performance.now() - started;
    expect(isBridgeError(err, 'CHAIN__RPC_FAILED') && retriesAction(err)).toBe(true);
    expect((err as Error).message).toMatch(/no response within 150 ms/);
    expect(server?.calls).toHaveLength(READ_ATTEMPTS);
    expect(await retries('getEpochInfo')).toBe(READ_ATTEMPTS - 1);
    expect(elapsed).toBeLessThan(readCallBudgetMs(timeoutMs) + 500);
  });

  it('a permanent failure (invalid params) is not retried', async () => {
    const rpc = await setup(() => ({ error: { code: -32602, message: 'invalid params' } }));
    const err = await rpc.getBalance(address, 'confirmed', signal()).catch((error: unknown) => error);
    expect(isBridgeError(err, 'CHAIN__RPC_FAILED') && err.context.rpcCode).toBe(-32602);
    expect(server?.calls).toHaveLength(1);
    expect(await retries('getBalance')).toBe(0);
  });

  it('sendTransaction is never retried, even on HTTP 500', async () => {
    const rpc = await setup(() => ({ http: 500 }));
    const send = rpc.sendTransaction(new Uint8Array([1]), { skipPreflight: true, preflightCommitment: 'confirmed' }, signal());
    await expect(send).rejects.toMatchObject({ code: 'CHAIN__RPC_FAILED' });
    expect(server?.calls).toHaveLength(1);
    expect(await retries('sendTransaction')).toBe(0);
  });

  it('honours Retry-After (capped): the retry waits for it', async () => {
    const arrivals: number[] = [];
    const replies = script({ http: 429, headers: { 'retry-after': '1' } }, balance);
    const rpc = await setup((call) => {
      arrivals.push(performance.now());
      return replies(call);
    });
    expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(42);
    expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(950);
  });

  it('an abort during the backoff wait rejects with the caller reason at once', async () => {
    const rpc = await setup(() => ({ http: 429, headers: { 'retry-after': '30' } }));
    const controller = new AbortController();
    const pending = rpc.getBalance(address, 'confirmed', controller.signal);
    await expect.poll(() => server?.calls.length).toBe(1);
    const reason = new Error('shutting down');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });
});

describe('read retry arithmetic', () => {
  it('readCallBudgetMs = attempts x timeout + (attempts - 1) x max backoff', () => {
    expect(readCallBudgetMs(10_000)).toBe(READ_ATTEMPTS * 10_000 + (READ_ATTEMPTS - 1) * READ_BACKOFF_MAX_MS);
    expect(readCallBudgetMs(10_000)).toBe(32_000);
  });

  it.each([
    { header: null, expected: undefined },
    { header: '2', expected: 2_000 },
    { header: ' 0 ', expected: 0 },
    { header: 'Tue, 24 Nov 2026 07:00:05 GMT', expected: 5_000 },
    { header: 'Tue, 24 Nov 2026 06:00:00 GMT', expected: 0 },
  ])('parseRetryAfter($header) = $expected ms', ({ header, expected }) => {
    expect(parseRetryAfter(header, Date.parse('2026-11-24T07:00:00Z'))?.ms).toBe(expected);
  });

  const contextWith = (retryAfterMs?: number): IRetryBackoffContext<unknown> => {
    const detail = { kind: 'http' as const, status: 429, reason: 'HTTP 429', ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
    return { attempt: 1, signal: signal(), result: { error: rpcFailure('source', 'getBalance', detail) } };
  };

  it.each([
    { jitter: 120, retryAfterMs: undefined, expected: 120 },
    { jitter: 120, retryAfterMs: 400, expected: 400 },
    { jitter: 700, retryAfterMs: 400, expected: 700 },
    { jitter: 120, retryAfterMs: 60_000, expected: READ_BACKOFF_MAX_MS },
    { jitter: 5_000, retryAfterMs: undefined, expected: READ_BACKOFF_MAX_MS },
  ])('the wait is max(jitter $jitter, Retry-After $retryAfterMs), capped', ({ jitter, retryAfterMs, expected }) => {
    const backoff = new RetryAfterBackoff(new ConstantBackoff(jitter));
    const first = backoff.next(contextWith(retryAfterMs));
    expect(first.duration).toBe(expected);
    expect(first.next(contextWith()).duration).toBe(Math.min(jitter, READ_BACKOFF_MAX_MS));
  });
});
