import { chainBounds } from '../../src/chain/client/chain-bounds.js';
import { Keypair } from '@solana/web3.js';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { startDevnetNode, type DevnetNode } from '../../devnet/node.js';
import { createChainRpc } from '../../src/chain/rpc/chain-rpc.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { attemptDeadlineMs } from '../../src/machines/delays.js';
import { nextIndexOf, withdrawTracker } from './support/chain-state.js';
import { startBridgeCrank, startBridgeCranks } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { depositRejected, settleAfterRounds } from './support/settle.js';
import { metricSample } from '../support/metric-value.js';

/**
 * What real RPC nodes do that the friendly devnet node does not (shared/PROTOCOL.md), each
 * reproduced with a devnet fault over real HTTP: no transaction history, an endpoint refusing us
 * with HTTP 403, rate limits (a load balancer over a backend 40 slots behind:
 * real-nodes-heights.test.ts, which runs beside this file).
 */

let bridge: DevnetBridge | undefined;
let node: DevnetNode | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
  await node?.close();
  node = undefined;
});

describe('a chain without transaction history', () => {
  it('no history on either chain: transfers complete, a dropped transaction is re-signed at its expiry, /health is ok and names the check that is off', async () => {
    // 20 ms slots: a blockhash lives 151 slots (about 3 s).
    const b = (bridge = await startDevnetBridge({ slotIntervalMs: 20 }));
    b.pair.source.faults.set({ noHistory: true });
    b.pair.target.faults.set({ noHistory: true });
    const settings = { maxAttempts: 3, retryBackoffMs: 20, rpcTimeoutMs: 2_000, productionTiming: true };
    const cranks = await startBridgeCranks(b, [0, 1, 2], settings);
    const a = cranks[0]!;
    await depositRejected(b, 3);

    // Every send of the first transaction is dropped (accepted, never landed) until it expired.
    b.pair.target.faults.set({ dropTransactions: 1_000_000 });
    const started = Date.now();
    const cycle = a.service.runOnce();
    await expect
      .poll(() => metricSample(a.metrics.transactionResigns, { chain: 'target', reason: 'expired' }), { timeout: 30_000, interval: 5 })
      .toBe(1);
    const expiredAfterMs = Date.now() - started;
    b.pair.target.faults.set({ dropTransactions: 0 });
    expect(await cycle).toMatchObject({ ack_deposit_attempted: true });
    // Resolved from the status cache at the blockhash's expiry (about 3 s), long before the attempt deadline.
    expect(expiredAfterMs).toBeLessThan(15_000);
    expect(attemptDeadlineMs(chainBounds(settings))).toBeGreaterThan(100_000);
    expect(nextIndexOf(withdrawTracker(b), b, 0)).toBe(3);
    expect(a.service.health().last_error).toBeNull();

    await settleAfterRounds(b, cranks, 3);
    for (const crank of cranks) {
      const health = crank.service.health();
      expect(crank.service.status()).toBe('ok');
      expect(health.last_error).toBeNull();
      expect(health.checks_off).toEqual([
        { check: 'second_signer', chain: 'source', reason: expect.stringContaining('BRIDGE_SOURCE_RPC_FALLBACK_URLS') },
        { check: 'second_signer', chain: 'target', reason: expect.stringContaining('BRIDGE_TARGET_RPC_FALLBACK_URLS') },
      ]);
      expect(await metricSample(crank.metrics.rpcHistoryAvailable, { chain: 'source' })).toBe(0);
      expect(await metricSample(crank.metrics.rpcHistoryAvailable, { chain: 'target' })).toBe(0);
      // Said once per chain, however many cycles ran.
      const said = crank.logs.records().filter((record) => record.level === 'warn' && String(record.msg).includes('second-signer detection is off'));
      expect(said.map((record) => record.chain).sort()).toEqual(['source', 'target']);
    }
  }, 120_000);

  it('history only on the fallback: a second signer is still detected', async () => {
    const b = (bridge = await startDevnetBridge());
    const sourceFallback = await b.pair.source.addEndpoint();
    const targetFallback = await b.pair.target.addEndpoint();
    b.pair.source.faults.set({ noHistory: true });
    b.pair.target.faults.set({ noHistory: true });
    const urls = { sourceRpcUrls: [b.pair.source.url, sourceFallback.url], targetRpcUrls: [b.pair.target.url, targetFallback.url] };
    // Two cranks signing with authority 0's key: each is the other's second signer.
    const first = startBridgeCrank(b, 0, urls);
    const second = startBridgeCrank(b, 0, urls);
    await Promise.all([first.service.runOnce(), second.service.runOnce()]);

    await depositRejected(b, 1);
    expect(await first.service.runOnce()).toMatchObject({ ack_deposit_attempted: true });
    await second.service.runOnce();
    expect(await metricSample(second.metrics.foreignSignatures, { chain: 'target' })).toBe(1);
    expect(second.service.status()).toBe('degraded');
    expect(second.service.health().checks_off).toBeUndefined();
    expect(await metricSample(second.metrics.rpcHistoryAvailable, { chain: 'target' })).toBe(1);
  }, 60_000);
});

describe('an endpoint refusing the server', () => {
  it('a primary answering 403 to everything: the fallback serves within one cycle, the primary shows down', async () => {
    const b = (bridge = await startDevnetBridge());
    const source = await b.pair.source.addEndpoint();
    const target = await b.pair.target.addEndpoint();
    source.faults.set({ httpStatus: 403 });
    target.faults.set({ httpStatus: 403 });
    const cranks = await startBridgeCranks(b, [0, 1, 2], {
      sourceRpcUrls: [source.url, b.pair.source.url],
      targetRpcUrls: [target.url, b.pair.target.url],
    });
    await depositRejected(b, 1);
    const a = cranks[0]!;
    expect(await a.service.runOnce()).toMatchObject({ ack_deposit_attempted: true });
    expect(a.service.health().last_error).toBeNull();
    expect(nextIndexOf(withdrawTracker(b), b, 0)).toBe(1);
    expect(await metricSample(a.metrics.rpcEndpointUp, { chain: 'target', endpoint: new URL(target.url).origin })).toBe(0);
    const refusals = a.logs.records().filter((record) => record.status === 403);
    expect(refusals.map((record) => record.chain).sort()).toEqual(['source', 'target']);
  }, 60_000);
});

describe('rate limits', () => {
  const address = Keypair.generate().publicKey;
  const signal = () => new AbortController().signal;

  it('a 429 with Retry-After: 3 delays the next call to that endpoint by about 3 s; with a second endpoint the call goes there at once', async () => {
    node = await startDevnetNode({ chainId: 1, name: 'source' });
    node.faults.set({ methods: { getBalance: { http429: 1, retryAfterSecs: 3 } } });
    const alone = createChainRpc({ chain: 'source', url: node.url, timeoutMs: 5_000, metrics: createMetrics(new Registry()) });
    let started = performance.now();
    expect(await alone.getBalance(address, 'confirmed', signal())).toBe(0);
    const waitedMs = performance.now() - started;
    expect(waitedMs).toBeGreaterThanOrEqual(2_950);
    expect(waitedMs).toBeLessThan(4_500);

    const other = await node.addEndpoint();
    node.faults.set({ methods: { getBalance: { http429: 1, retryAfterSecs: 3 } } });
    const pooled = createChainRpc({
      chain: 'source',
      url: node.url,
      fallbackUrls: [other.url],
      timeoutMs: 5_000,
      metrics: createMetrics(new Registry()),
    });
    started = performance.now();
    expect(await pooled.getBalance(address, 'confirmed', signal())).toBe(0);
    expect(performance.now() - started).toBeLessThan(1_500);
  }, 30_000);
});
