import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { RpcFetch } from '../../src/chain/rpc/rpc-fetch.js';
import { runRound, startBridgeCrank, startBridgeCranks, type BridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { depositRejected, settleWithin } from './support/settle.js';
import { deposit } from './support/transactions.js';
import { metricSample, metricValue } from '../support/metric-value.js';

/**
 * One lying or lagging answer (issue 39, "slots one node cannot poison"), each over the devnet
 * and real HTTP, the lie told by a fetch between one crank and the nodes: an inflated slot on a
 * history entry, an inflated context slot before the first history read, a fallback whose
 * getSlot names a slot far ahead. Each ends with every transfer settled, /health ok, no error
 * line, and no transaction carried twice (the lagging backend: test/integration/real-nodes.test.ts).
 */

const INFLATION = 1_000_000;
const ROUND_PAUSE_MS = 100;

interface Lie {
  method: string;
  /** Only answers from this origin; any when absent. */
  origin?: string;
  /** How many answers it rewrites; Infinity for every one while `active`. */
  times: number;
  active: boolean;
  rewrite(result: Record<string, unknown>): unknown;
}

/** The real fetch, with the answers `lies` name rewritten (each counts down its `times`). */
function lyingFetch(lies: Lie[]): RpcFetch {
  return async (input, init) => {
    const response = await globalThis.fetch(input, init);
    const method = (JSON.parse(String(init?.body)) as { method?: string }).method;
    const origin = new URL(String(input instanceof Request ? input.url : input)).origin;
    const lie = lies.find((one) => one.active && one.times > 0 && one.method === method && (one.origin === undefined || one.origin === origin));
    if (lie === undefined) return response;
    const body = (await response.json()) as { result?: Record<string, unknown> | null };
    const { result } = body;
    if (result === undefined || result === null || (Array.isArray(result) && result.length === 0)) {
      return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
    }
    lie.times -= 1;
    return new Response(JSON.stringify({ ...body, result: lie.rewrite(result) }), { status: 200, headers: { 'content-type': 'application/json' } });
  };
}

const inflatedContext = (result: Record<string, unknown>) => ({
  ...result,
  context: { ...(result['context'] as object), slot: (result['context'] as { slot: number }).slot + INFLATION },
});

/**
 * Rounds of the cranks' cycles for `ms`, a pause between rounds: what these cases need is
 * reads while time passes (the pace measured, the slot probes' 2 s turns), not back-to-back
 * cycles, which held a core for the whole wait.
 */
async function roundsFor(cranks: readonly BridgeCrank[], ms: number): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    await runRound(cranks);
    await delay(ROUND_PAUSE_MS);
  }
}

async function expectHealthy(b: DevnetBridge, cranks: readonly BridgeCrank[], count: number): Promise<void> {
  expectSettled(b, count);
  await expectTransactionsAccounted(b, cranks);
  for (const crank of cranks) {
    expect({ slot: crank.slot, status: crank.service.status() }).toEqual({ slot: crank.slot, status: 'ok' });
    expect(crank.logs.records().filter((record) => record.level === 'error')).toEqual([]);
    expect(await metricSample(crank.metrics.foreignSignatures, { chain: 'source' })).toBe(0);
    expect(await metricSample(crank.metrics.foreignSignatures, { chain: 'target' })).toBe(0);
  }
}

describe.concurrent('one lying answer', () => {
  it('a history answer whose newest entry carries an inflated slot: the cursor does not blind later reads, every transfer settles', async ({
    onTestFinished,
  }) => {
    const b = await startDevnetBridge();
    onTestFinished(() => b.close());
    const lie: Lie = {
      method: 'getSignaturesForAddress',
      times: 4,
      active: false,
      rewrite: (result) =>
        Array.isArray(result) ? result.map((entry: { slot: number }, i) => (i === 0 ? { ...entry, slot: entry.slot + INFLATION } : entry)) : result,
    };
    const cranks = await startBridgeCranks(b, [0, 1, 2], { fetch: lyingFetch([lie]) });
    await depositRejected(b, 2);
    lie.active = true;
    await settleWithin(b, cranks, 8);
    expect(lie.times).toBeLessThan(4);
    lie.active = false;
    await depositRejected(b, 2);
    await settleWithin(b, cranks, 8);
    // The history reads go on: the authority's own transactions are checked, none is taken for another signer's.
    for (const crank of cranks) expect(crank.service.health().checks_off).toBeUndefined();
    await expectHealthy(b, cranks, 4);
  }, 40_000);

  it('a history entry at an inflated slot does not blind the history: a real twin signing afterwards is still caught', async ({ onTestFinished }) => {
    const b = await startDevnetBridge();
    onTestFinished(() => b.close());
    const lie: Lie = {
      method: 'getSignaturesForAddress',
      times: 2,
      active: true,
      rewrite: (result) =>
        Array.isArray(result) ? result.map((entry: { slot: number }, i) => (i === 0 ? { ...entry, slot: entry.slot + INFLATION } : entry)) : result,
    };
    const halting = { config: { onForeignSigner: 'halt' as const, handoffMs: 0 } };
    const a = startBridgeCrank(b, 0, { ...halting, fetch: lyingFetch([lie]) });
    await deposit(b, { amount: 100n, sourceMint: b.world.tokenPairs.normal.sourceMint });
    await a.service.runOnce();
    await a.service.runOnce();
    expect(lie.times).toBe(0);
    expect(await metricValue(a.metrics.foreignSignatures, {})).toBe(0);
    // The twin: a second process with the same key, voting for a new deposit.
    const twin = startBridgeCrank(b, 0, halting);
    await deposit(b, { amount: 101n, sourceMint: b.world.tokenPairs.normal.sourceMint });
    await twin.service.runOnce();
    await a.service.runOnce();
    expect(await metricValue(a.metrics.foreignSignatures, {})).toBeGreaterThanOrEqual(1);
  }, 40_000);

  it('an inflated context slot on the very first answers (before the first history read): at most that cycle fails, no floor rests on it, every transfer settles', async ({
    onTestFinished,
  }) => {
    const b = await startDevnetBridge();
    onTestFinished(() => b.close());
    const lies: Lie[] = [{ method: 'getMultipleAccounts', times: 1, active: true, rewrite: inflatedContext }];
    const cranks = await startBridgeCranks(b, [0, 1, 2], { fetch: lyingFetch(lies) });
    await depositRejected(b, 3);
    await settleWithin(b, cranks, 8);
    await runRound(cranks);
    expectSettled(b, 3);
    await expectTransactionsAccounted(b, cranks);
    for (const crank of cranks) {
      expect(crank.service.status()).toBe('ok');
      // Nothing judges a process's first answer (no pace measured, no second answer yet): the
      // startup cycle's reads anchored on it may fail once; the floor never takes it.
      for (const record of crank.logs.records().filter((one) => one.level === 'error'))
        expect(JSON.stringify(record)).toContain('Minimum context slot has not been reached');
      expect(await metricSample(crank.metrics.rpcSlotFloor, { chain: 'source' })).toBeLessThan(INFLATION);
      expect(await metricSample(crank.metrics.rpcSlotFloorRebases, { chain: 'source' })).toBe(0);
      expect(await metricSample(crank.metrics.foreignSignatures, { chain: 'source' })).toBe(0);
    }
  }, 40_000);

  it('an inflated context slot once the pace is measured: refused as an outlier, counted, every transfer settles with no error line', async ({
    onTestFinished,
  }) => {
    const b = await startDevnetBridge();
    onTestFinished(() => b.close());
    const lies: Lie[] = ['getMultipleAccounts', 'getBalance'].map((method) => ({ method, times: 2, active: false, rewrite: inflatedContext }));
    const cranks = await startBridgeCranks(b, [0, 1, 2], { fetch: lyingFetch(lies) });
    await roundsFor(cranks, 1_500);
    for (const lie of lies) lie.active = true;
    await depositRejected(b, 3);
    await settleWithin(b, cranks, 8);
    expect(lies.every((lie) => lie.times === 0)).toBe(true);
    const outliers = await Promise.all(cranks.map((crank) => metricValue(crank.metrics.rpcSlotOutliers, { direction: 'ahead' })));
    expect(outliers.reduce((a, n) => a + n, 0)).toBeGreaterThan(0);
    await expectHealthy(b, cranks, 3);
  }, 40_000);

  it('a fallback whose getSlot names a slot far ahead takes no read; once it stops, every endpoint is up', async ({ onTestFinished }) => {
    const b = await startDevnetBridge();
    onTestFinished(() => b.close());
    const sourceFallback = await b.pair.source.addEndpoint();
    const targetFallback = await b.pair.target.addEndpoint();
    const lies: Lie[] = [sourceFallback, targetFallback].map((endpoint) => ({
      method: 'getSlot',
      origin: new URL(endpoint.url).origin,
      times: Infinity,
      active: true,
      rewrite: (slot) => (slot as unknown as number) + INFLATION,
    }));
    const cranks = await startBridgeCranks(b, [0, 1, 2], {
      fetch: lyingFetch(lies),
      sourceRpcUrls: [b.pair.source.url, sourceFallback.url],
      targetRpcUrls: [b.pair.target.url, targetFallback.url],
    });
    await depositRejected(b, 3);
    // Slot probes run at most every 2 s, while reads happen: settle over a few seconds of rounds.
    await roundsFor(cranks, 4_000);
    for (const crank of cranks) {
      expect(await metricValue(crank.metrics.rpcSlotOutliers, { endpoint: new URL(sourceFallback.url).origin, direction: 'ahead' })).toBeGreaterThan(
        0,
      );
      expect(await metricSample(crank.metrics.rpcEndpointUp, { endpoint: new URL(b.pair.source.url).origin })).toBe(1);
      expect(await metricSample(crank.metrics.rpcEndpointUp, { endpoint: new URL(sourceFallback.url).origin })).toBe(0);
    }
    for (const lie of lies) lie.active = false;
    await roundsFor(cranks, 4_500);
    for (const crank of cranks) {
      for (const endpoint of [b.pair.source.url, sourceFallback.url, b.pair.target.url, targetFallback.url]) {
        expect(await metricSample(crank.metrics.rpcEndpointUp, { endpoint: new URL(endpoint).origin })).toBe(1);
      }
    }
    await expectHealthy(b, cranks, 3);
  }, 40_000);
});
