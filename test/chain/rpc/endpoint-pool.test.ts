import { Keypair } from '@solana/web3.js';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createChainRpc } from '../../../src/chain/rpc/chain-rpc.js';
import { BREAKER_FAILURES, BREAKER_HALF_OPEN_MS } from '../../../src/chain/rpc/endpoint-pool.js';
import { REFUSAL_HOLD_MS } from '../../../src/chain/rpc/endpoint-refusals.js';
import { captureLogs, type CapturedLogs } from '../../support/log-capture.js';
import { metricSample, metricValue } from '../../support/metric-value.js';
import { isHistoryUnavailable, preflightFailure } from '../../../src/chain/rpc/rpc-failure.js';
import { isDefiniteSendRefusal } from '../../../src/failure-policy.js';
import { createMetrics, type Metrics } from '../../../src/metrics/metrics.js';
import { closedPortUrl } from '../../../devnet/rpc/silent-endpoints.js';
import { NO_HISTORY_REPLY, startJsonRpcServer, type Handler, type JsonRpcTestServer } from './json-rpc-test-server.js';

const servers: JsonRpcTestServer[] = [];
let metrics: Metrics;

afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const address = Keypair.fromSeed(new Uint8Array(32).fill(2)).publicKey;
const signal = () => new AbortController().signal;

async function serve(handler: Handler): Promise<JsonRpcTestServer> {
  const server = await startJsonRpcServer(handler);
  servers.push(server);
  return server;
}

/** A node at `slot` answering getSlot, getBalance and sendTransaction. */
function node(slot: number, balance: number, send: () => ReturnType<Handler> = () => ({ result: 'SiG' })): Handler {
  return (call) => {
    if (call.method === 'getSlot') return { result: slot };
    if (call.method === 'sendTransaction') return send();
    return { result: { context: { slot }, value: balance } };
  };
}

let logs: CapturedLogs;

function pooled(urls: string[], timeoutMs = 300) {
  metrics = createMetrics(new Registry());
  logs = captureLogs('info');
  return createChainRpc({ chain: 'target', url: urls[0]!, fallbackUrls: urls.slice(1), timeoutMs, maxSlotLag: 128, metrics, logger: logs.logger });
}

const gauge = (name: 'rpcEndpointUp' | 'rpcEndpointSlot', endpoint: string) => metricSample(metrics[name], { endpoint });
const historyGauge = () => metricSample(metrics.rpcHistoryAvailable, { chain: 'target' });
const endpointErrors = (endpoint: string) => metricValue(metrics.rpcEndpointErrors, { endpoint });

const origin = (url: string) => new URL(url).origin;

describe('several endpoints per chain', () => {
  it('reads go to the primary while it answers', async () => {
    const primary = await serve(node(500, 1));
    const fallback = await serve(node(500, 2));
    const rpc = pooled([primary.url, fallback.url]);
    expect(rpc.endpoints).toEqual([origin(primary.url), origin(fallback.url)]);
    expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(1);
    expect(fallback.calls.filter((call) => call.method === 'getBalance')).toHaveLength(0);
  });

  it('a dead primary (closed port): the retry goes to the fallback, and the primary, down, is passed over until it answers', async () => {
    const dead = await closedPortUrl();
    const fallback = await serve(node(500, 2));
    const rpc = pooled([dead, fallback.url]);
    expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(2);
    expect(await gauge('rpcEndpointUp', origin(dead))).toBe(0);
    expect(await gauge('rpcEndpointUp', origin(fallback.url))).toBe(1);
    expect(await endpointErrors(origin(dead))).toBeGreaterThanOrEqual(1);
    // Down: the next reads go straight to the fallback, without a retry.
    const retriesBefore = await metricValue(metrics.rpcRetries);
    for (let i = 0; i < 3; i++) expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(2);
    expect(await metricValue(metrics.rpcRetries)).toBe(retriesBefore);
  });

  it('two fallbacks refusing connections show up 0 from their failed slot probes, while reads never touch them', async () => {
    const primary = await serve(node(500, 1));
    const [deadA, deadB] = [await closedPortUrl(), await closedPortUrl()];
    const rpc = pooled([primary.url, deadA, deadB]);
    expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(1);
    await expect.poll(() => gauge('rpcEndpointUp', origin(deadA))).toBe(0);
    await expect.poll(() => gauge('rpcEndpointUp', origin(deadB))).toBe(0);
    expect(await gauge('rpcEndpointUp', origin(primary.url))).toBe(1);
    expect((await metrics.rpcEndpointErrors.get()).values.filter((value) => value.labels.kind === 'network' && value.value > 0).length).toBe(2);
  });

  it('a primary answering 403 to everything: the read moves to the fallback at once, the primary is out, one warn line names origin and status', async () => {
    const primary = await serve((call) => (call.method === 'getSlot' ? { result: 500 } : { http: 403, body: 'Forbidden' }));
    const fallback = await serve(node(500, 2));
    const rpc = pooled([primary.url, fallback.url]);
    for (let i = 0; i < 3; i++) expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(2);
    expect(primary.calls.filter((call) => call.method === 'getBalance')).toHaveLength(1);
    expect(await gauge('rpcEndpointUp', origin(primary.url))).toBe(0);
    const warnings = logs.records().filter((record) => record['status'] === 403);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!['msg']).toContain(
      `${origin(primary.url)} of the destination chain answers HTTP 403: taken out until ${REFUSAL_HOLD_MS / 1000} s after its latest refusal`,
    );
  });

  it('a refusing endpoint is tried again after the hold, and a line says it serves again', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    let refusing = true;
    const primary = await serve((call) => (refusing ? { http: 401 } : node(500, 1)(call)));
    const fallback = await serve(node(500, 2));
    const rpc = pooled([primary.url, fallback.url]);
    expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(2);
    refusing = false;
    vi.setSystemTime(Date.now() + REFUSAL_HOLD_MS - 1_000);
    expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(2);
    vi.setSystemTime(Date.now() + 1_001);
    // The probe of that read cleared the primary's silence; the hold is over.
    await expect.poll(async () => rpc.getBalance(address, 'confirmed', signal())).toBe(1);
    expect(await gauge('rpcEndpointUp', origin(primary.url))).toBe(1);
    expect(logs.records().filter((record) => String(record['msg']).includes('serves again'))).toHaveLength(1);
  });

  it('history reads go to the endpoint that keeps history; without any, they fail as history-unavailable and the gauge says 0', async () => {
    const withHistory: Handler = (call) => (call.method === 'getSignaturesForAddress' ? { result: [] } : node(500, 2)(call));
    const primary = await serve((call) => (call.method === 'getSignaturesForAddress' ? NO_HISTORY_REPLY : node(500, 1)(call)));
    const fallback = await serve(withHistory);
    const rpc = pooled([primary.url, fallback.url]);
    expect(await rpc.getSignaturesForAddress(address, { limit: 1 }, signal())).toEqual([]);
    expect(await rpc.getSignaturesForAddress(address, { limit: 1 }, signal())).toEqual([]);
    // Asked once, then passed over for history reads.
    expect(primary.calls.filter((call) => call.method === 'getSignaturesForAddress')).toHaveLength(1);
    expect(fallback.calls.filter((call) => call.method === 'getSignaturesForAddress')).toHaveLength(2);
    expect(rpc.hasHistory()).toBe(true);
    expect(await historyGauge()).toBe(1);
    // Other reads still prefer the primary.
    expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(1);

    const alone = pooled([primary.url]);
    const err = await alone.getSignaturesForAddress(address, { limit: 1 }, signal()).catch((error: unknown) => error);
    expect(isHistoryUnavailable(err)).toBe(true);
    expect(alone.hasHistory()).toBe(false);
    expect(await historyGauge()).toBe(0);
    const said = logs.records().filter((record) => String(record['msg']).includes('second-signer detection is off'));
    expect(said).toHaveLength(1);
    expect(said[0]!['level']).toBe('warn');
    // Not asked again until HISTORY_RECHECK_MS has passed: the next read fails without a request.
    const before = primary.calls.length;
    expect(isHistoryUnavailable(await alone.getTransactionSignatures('sig', signal()).catch((error: unknown) => error))).toBe(true);
    expect(primary.calls.length).toBe(before);
  });

  it("a floor no node has reached (-32016 from both, a lying answer's slot) takes neither out: the next read at a reachable slot is answered at once", async () => {
    const behindFloor =
      (slot: number, balance: number): Handler =>
      (call) => {
        const asked = (call.params[1] as { minContextSlot?: number } | undefined)?.minContextSlot;
        if (asked !== undefined && asked > slot) return { error: { code: -32016, message: 'Minimum context slot has not been reached' } };
        return node(slot, balance)(call);
      };
    const primary = await serve(behindFloor(500, 1));
    const fallback = await serve(behindFloor(500, 2));
    const rpc = pooled([primary.url, fallback.url]);
    await expect(rpc.getAccountInfo(address, { commitment: 'confirmed', minContextSlot: 1_000_500 }, signal())).rejects.toThrow(/-32016/);
    await expect(rpc.getBalance(address, 'confirmed', signal())).resolves.toBe(1);
    expect(await gauge('rpcEndpointUp', origin(primary.url))).toBe(1);
    expect(await gauge('rpcEndpointUp', origin(fallback.url))).toBe(1);
    expect(primary.calls.length + fallback.calls.length).toBeGreaterThan(BREAKER_FAILURES * 2);
  });

  it('the primary coming back: probed after the half-open delay, reads return to it', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    let healthy = false;
    const primaryNode = node(500, 1);
    const primary = await serve((call) => (healthy ? primaryNode(call) : { http: 503 }));
    const fallback = await serve(node(500, 2));
    const rpc = pooled([primary.url, fallback.url]);
    for (let i = 0; i < BREAKER_FAILURES; i++) expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(2);
    expect(await gauge('rpcEndpointUp', origin(primary.url))).toBe(0);

    healthy = true;
    vi.setSystemTime(Date.now() + BREAKER_HALF_OPEN_MS - 1_000);
    expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(2);
    vi.setSystemTime(Date.now() + 1_001);
    expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(1);
    expect(await gauge('rpcEndpointUp', origin(primary.url))).toBe(1);
    expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(1);
  });

  it('a stalled primary (accepts, never answers): the read times out once and the fallback answers', async () => {
    const stalled = await serve((call) => (call.method === 'getSlot' ? { result: 500 } : { hang: true }));
    const fallback = await serve(node(500, 2));
    const rpc = pooled([stalled.url, fallback.url], 200);
    const started = performance.now();
    expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(2);
    expect(performance.now() - started).toBeLessThan(200 + 1_000 + 500);
  });

  it('a primary lagging 200 slots behind two fallbacks that agree is demoted once probed: reads go to a fallback, its up gauge is 0', async () => {
    const lagging = await serve(node(1_000, 1));
    const fallback = await serve(node(1_200, 2));
    const second = await serve(node(1_200, 3));
    const rpc = pooled([lagging.url, fallback.url, second.url]);
    await rpc.getBalance(address, 'confirmed', signal());
    await expect.poll(() => gauge('rpcEndpointSlot', origin(fallback.url))).toBe(1_200);
    await expect.poll(() => gauge('rpcEndpointSlot', origin(second.url))).toBe(1_200);
    expect(await gauge('rpcEndpointSlot', origin(lagging.url))).toBe(1_000);
    expect(await gauge('rpcEndpointUp', origin(lagging.url))).toBe(0);
    expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(2);
  });

  it('one fallback naming a slot 200 ahead of the primary that never advances, with nobody to agree: an outlier (counted), the primary serves', async () => {
    const primary = await serve(node(1_000, 1));
    const ahead = await serve(node(1_200, 2));
    const rpc = pooled([primary.url, ahead.url]);
    // Nothing is judged before the chain's pace is measured (two answers 1 s apart or more); slot probes run while reads do.
    const reading = async () => {
      await rpc.getBalance(address, 'confirmed', signal());
      return metricValue(metrics.rpcSlotOutliers, { endpoint: origin(ahead.url), direction: 'ahead' });
    };
    await expect.poll(reading, { timeout: 8_000, interval: 500 }).toBeGreaterThan(0);
    expect(await gauge('rpcEndpointUp', origin(primary.url))).toBe(1);
    expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(1);
  });

  it('a fallback claiming a getSlot far ahead takes no read, and once it tells the truth every endpoint is up again', async () => {
    let claimed = 10_000_000;
    const primary = await serve(node(1_000, 1));
    const liar = await serve((call) => (call.method === 'getSlot' ? { result: claimed } : { result: { context: { slot: 1_000 }, value: 2 } }));
    const rpc = pooled([primary.url, liar.url]);
    const reading = async () => {
      await rpc.getBalance(address, 'confirmed', signal());
      return metricValue(metrics.rpcSlotOutliers, { endpoint: origin(liar.url), direction: 'ahead' });
    };
    await expect.poll(reading, { timeout: 8_000, interval: 500 }).toBeGreaterThan(0);
    expect(await rpc.getBalance(address, 'confirmed', signal())).toBe(1);
    expect(await gauge('rpcEndpointUp', origin(primary.url))).toBe(1);
    claimed = 1_001;
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    await rpc.getBalance(address, 'confirmed', signal());
    await expect.poll(() => gauge('rpcEndpointSlot', origin(liar.url))).toBe(1_001);
    expect(await gauge('rpcEndpointUp', origin(primary.url))).toBe(1);
    expect(await gauge('rpcEndpointUp', origin(liar.url))).toBe(1);
    expect(await metricValue(metrics.rpcSlotFloor, { chain: 'target' })).toBe(1_000);
  });

  it('a signed transaction goes to every endpoint in service; one acceptance is enough', async () => {
    const primary = await serve(node(500, 1, () => ({ http: 500 })));
    const fallback = await serve(node(500, 2));
    const rpc = pooled([primary.url, fallback.url]);
    const options = { skipPreflight: true, preflightCommitment: 'confirmed' as const };
    expect(await rpc.sendTransaction(new Uint8Array([1, 2]), options, signal())).toBe('SiG');
    const sent = (server: JsonRpcTestServer) => server.calls.filter((call) => call.method === 'sendTransaction');
    expect(sent(primary)).toHaveLength(1);
    expect(sent(fallback)).toHaveLength(1);
    expect(sent(primary)[0]!.params[0]).toBe(sent(fallback)[0]!.params[0]);
  });

  it('a preflight refusal is reported as with one endpoint when every endpoint refuses', async () => {
    const refusal = { error: { code: -32002, message: 'simulation failed', data: { err: { InstructionError: [0, { Custom: 6001 }] }, logs: [] } } };
    const primary = await serve(node(500, 1, () => ({ error: { code: -32005, message: 'Node is unhealthy' } })));
    const fallback = await serve(node(500, 2, () => refusal));
    const rpc = pooled([primary.url, fallback.url]);
    const err = await rpc
      .sendTransaction(new Uint8Array([1]), { skipPreflight: false, preflightCommitment: 'confirmed' }, signal())
      .catch((error: unknown) => error);
    expect(preflightFailure(err)).toEqual({ transactionError: { InstructionError: [0, { Custom: 6001 }] }, logs: [] });
  });

  it('a lost answer (504) beside a lagging refusal (BlockhashNotFound) leaves the outcome unknown, not refused', async () => {
    const lagging = { error: { code: -32002, message: 'simulation failed', data: { err: 'BlockhashNotFound', logs: [] } } };
    const primary = await serve(node(500, 1, () => ({ http: 504 })));
    const fallback = await serve(node(500, 2, () => lagging));
    const rpc = pooled([primary.url, fallback.url]);
    const err = await rpc
      .sendTransaction(new Uint8Array([1]), { skipPreflight: false, preflightCommitment: 'confirmed' }, signal())
      .catch((error: unknown) => error);
    expect(preflightFailure(err)).toBeUndefined();
    expect(isDefiniteSendRefusal(err)).toBe(false);
    expect(err).toMatchObject({ code: 'CHAIN__RPC_FAILED', context: { method: 'sendTransaction', status: 504 } });
  });
});

describe('each endpoint is a node of the chain (genesis hash)', () => {
  const OURS = 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG';
  const THEIRS = '4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY';
  const PROBE_INTERVAL_MS = 2_000;

  it('asked once per endpoint, and again once one is back from an outage: a node of another cluster behind the same URL is then left out', async () => {
    const fallbackNode = { genesis: OURS, down: false };
    const primary = await serve((call) => (call.method === 'getGenesisHash' ? { result: OURS } : node(500, 1)(call)));
    const fallback = await serve((call) => {
      if (fallbackNode.down) return { drop: true };
      return call.method === 'getGenesisHash' ? { result: fallbackNode.genesis } : node(500, 2)(call);
    });
    let now = 1_000_000;
    metrics = createMetrics(new Registry());
    logs = captureLogs('info');
    const rpc = createChainRpc({
      chain: 'source',
      url: primary.url,
      fallbackUrls: [fallback.url],
      timeoutMs: 300,
      maxSlotLag: 128,
      metrics,
      logger: logs.logger,
      now: () => now,
    });
    const asked = () => fallback.calls.filter((call) => call.method === 'getGenesisHash').length;
    const probe = async () => {
      now += PROBE_INTERVAL_MS;
      await rpc.getBalance(address, 'confirmed', signal());
    };

    await probe();
    await expect.poll(asked).toBe(1);
    await probe();
    await probe();
    expect(asked()).toBe(1);
    expect(rpc.configurationProblems()).toEqual([]);

    // An outage, and another cluster's node behind the URL when it comes back.
    fallbackNode.down = true;
    await probe();
    await expect.poll(() => gauge('rpcEndpointUp', origin(fallback.url))).toBe(0);
    fallbackNode.genesis = THEIRS;
    fallbackNode.down = false;
    await probe();
    await expect.poll(() => gauge('rpcEndpointUp', origin(fallback.url))).toBe(1);
    await probe();
    await expect.poll(asked).toBe(2);
    await expect
      .poll(() => rpc.configurationProblems())
      .toEqual([
        `RPC endpoint ${origin(fallback.url)} in BRIDGE_SOURCE_RPC_FALLBACK_URLS is a node of another cluster: its genesis hash ${THEIRS} is not BRIDGE_SOURCE_RPC_URL's (${OURS}); ` +
          'it serves no reads or sends of the source chain. A configuration error, not transient: remove it from BRIDGE_SOURCE_RPC_FALLBACK_URLS or point it at a node of that chain',
      ]);
    expect(await gauge('rpcEndpointUp', origin(fallback.url))).toBe(0);
    expect(await metricValue(metrics.rpcEndpointClusterMismatches, { endpoint: origin(fallback.url) })).toBe(1);
    expect(logs.records().filter((record) => String(record['msg']).includes('is a node of another cluster'))).toHaveLength(1);
  });
});
