import { chainBounds } from '../../src/chain/client/chain-bounds.js';
import { Keypair } from '@solana/web3.js';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { startDevnetNode, type DevnetNode } from '../../devnet/node.js';
import { createChainRpc } from '../../src/chain/rpc/chain-rpc.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { attemptDeadlineMs } from '../../src/machines/delays.js';
import { nextIndexOf, withdrawTracker } from './support/chain-state.js';
import { failedAttemptErrors, runRound, startBridgeCrank, startBridgeCranks, type BridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { depositRejected } from './support/settle.js';
import { metricSample } from '../support/metric-value.js';

/**
 * What real RPC nodes do that the friendly devnet node does not (shared/PROTOCOL.md), each
 * reproduced with a devnet fault over real HTTP: no transaction history, a load balancer over
 * a backend 40 slots behind, an endpoint refusing us with HTTP 403.
 */

let bridge: DevnetBridge | undefined;
let node: DevnetNode | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
  await node?.close();
  node = undefined;
});

async function settle(b: DevnetBridge, cranks: readonly BridgeCrank[], count: number, rounds = 4): Promise<void> {
  for (let round = 0; round < rounds; round++) await runRound(cranks);
  expectSettled(b, count);
  for (const crank of cranks) expect(nextIndexOf(withdrawTracker(b), b, crank.slot)).toBe(count);
  await expectTransactionsAccounted(b, cranks);
}

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
    await expect.poll(() => metricSample(a.metrics.transactionResigns, { chain: 'target', reason: 'expired' }), { timeout: 30_000, interval: 5 }).toBe(1);
    const expiredAfterMs = Date.now() - started;
    b.pair.target.faults.set({ dropTransactions: 0 });
    expect(await cycle).toMatchObject({ ack_deposit_attempted: true });
    // Resolved from the status cache at the blockhash's expiry (about 3 s), long before the attempt deadline.
    expect(expiredAfterMs).toBeLessThan(15_000);
    expect(attemptDeadlineMs(chainBounds(settings))).toBeGreaterThan(100_000);
    expect(nextIndexOf(withdrawTracker(b), b, 0)).toBe(3);
    expect(a.service.health().last_error).toBeNull();

    await settle(b, cranks, 3);
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

/** What a decision taken from a stale view would say: a false second signer, a vote refused as out of order or as a repeat. */
const STALE_VIEW_ALARMS = /foreign|another process|not by this server|VoteOutOfOrder|VoteMismatch|InvalidVote/;

describe('a load balancer over nodes at different heights', () => {
  it('one backend 40 slots behind: every transfer completes, no foreign vote, no foreign signature, no vote refused; a restart does not flag its previous life', async () => {
    const b = (bridge = await startDevnetBridge());
    b.pair.source.advanceSlots(200);
    b.pair.target.advanceSlots(200);
    const source = await b.pair.source.addEndpoint();
    const target = await b.pair.target.addEndpoint();
    source.faults.set({ alternateBehindSlots: 40 });
    target.faults.set({ alternateBehindSlots: 40 });
    const urls = { sourceRpcUrls: [source.url], targetRpcUrls: [target.url] };
    const cranks = await startBridgeCranks(b, [0, 1, 2], urls);
    await depositRejected(b, 4);
    await settle(b, cranks, 4, 8);

    // Authority 0 votes, then restarts at once; the balancer sends its first reads to the fresh
    // backend, then half of them to one 40 slots behind, which does not know the newest
    // transaction (blocks are paused, so it stays so) but lists the older ones.
    b.pair.source.advanceSlots(100);
    b.pair.target.advanceSlots(100);
    await depositRejected(b, 1);
    // The lagging backend serves the chain as it was before the deposit (old state at its old
    // slot, no older than the floor): a cycle that read it sees nothing to do yet; one of the
    // next few reads the fresh backend.
    let attempted = false;
    for (let cycle = 0; cycle < 8 && !attempted; cycle++) attempted = (await cranks[0]!.service.runOnce()).ack_deposit_attempted;
    expect(attempted).toBe(true);
    b.pair.source.pause();
    b.pair.target.pause();
    source.faults.set({ alternateBehindSlots: 0 });
    target.faults.set({ alternateBehindSlots: 0 });
    // A restart: the first life stops (left running, it would be a twin that knows nothing of
    // the second life's votes, and a view older than them is then no stale read but a race).
    await cranks[0]!.service.stop(2_000);
    const restarted = startBridgeCrank(b, 0, urls);
    await restarted.service.runOnce();
    source.faults.set({ alternateBehindSlots: 40 });
    target.faults.set({ alternateBehindSlots: 40 });
    for (let cycle = 0; cycle < 8; cycle++) await restarted.service.runOnce();
    b.pair.source.resume();
    b.pair.target.resume();
    const afterRestart = [restarted, cranks[1]!, cranks[2]!];
    for (let round = 0; round < 6; round++) await runRound(afterRestart);
    expectSettled(b, 5);
    await expectTransactionsAccounted(b, afterRestart);

    for (const crank of [...cranks, restarted]) {
      // A read that met the lagging backend at every try fails its cycle (the next one reads
      // afresh); no decision was ever taken from it.
      expect(failedAttemptErrors(crank).filter((err) => STALE_VIEW_ALARMS.test(err))).toEqual([]);
      expect({ crank: crank === restarted ? 'restarted' : crank.slot, lastError: crank.service.health().last_error ?? '' }).not.toMatchObject({ lastError: expect.stringMatching(STALE_VIEW_ALARMS) });
      // Counted from zero at start (the dashboard's series exist before any event): none counted.
      expect(await metricSample(crank.metrics.foreignSignatures, { chain: 'source' })).toBe(0);
      expect(await metricSample(crank.metrics.foreignSignatures, { chain: 'target' })).toBe(0);
    }
  }, 120_000);
});

describe('an endpoint refusing the server', () => {
  it('a primary answering 403 to everything: the fallback serves within one cycle, the primary shows down', async () => {
    const b = (bridge = await startDevnetBridge());
    const source = await b.pair.source.addEndpoint();
    const target = await b.pair.target.addEndpoint();
    source.faults.set({ httpStatus: 403 });
    target.faults.set({ httpStatus: 403 });
    const cranks = await startBridgeCranks(b, [0, 1, 2], { sourceRpcUrls: [source.url, b.pair.source.url], targetRpcUrls: [target.url, b.pair.target.url] });
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
    const pooled = createChainRpc({ chain: 'source', url: node.url, fallbackUrls: [other.url], timeoutMs: 5_000, metrics: createMetrics(new Registry()) });
    started = performance.now();
    expect(await pooled.getBalance(address, 'confirmed', signal())).toBe(0);
    expect(performance.now() - started).toBeLessThan(1_500);
  }, 30_000);
});
