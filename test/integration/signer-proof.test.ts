import { afterEach, describe, expect, it } from 'vitest';
import type { RpcFetch } from '../../src/chain/rpc/rpc-fetch.js';
import { metricValue } from '../support/metric-value.js';
import { nextIndexOf, withdrawTracker } from './support/chain-state.js';
import { loggedSignatures, startBridgeCrank, type BridgeCrank, type CrankTuning } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { initNonces } from './support/nonces.js';
import { deposit } from './support/transactions.js';

/**
 * A second signer is proven, not reported (issue 39; docs/chain-client.md, "Who signs: proof,
 * not reports"), on the devnet over real HTTP: the operator's own `nonce init` while the server
 * runs, a node forging nonce values, a node re-listing an old genuine transaction of the key;
 * and a real twin still caught at the next cycle.
 */

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

/** Authority 0's crank (or its twin), halting on another signer, the production handoff off (devnet: one server per authority). */
async function haltingCrank(b: DevnetBridge, tuning: CrankTuning = {}): Promise<BridgeCrank> {
  const crank = startBridgeCrank(b, 0, { ...tuning, config: { onForeignSigner: 'halt', handoffMs: 0 } });
  await crank.service.runOnce();
  return crank;
}

const foreign = (crank: BridgeCrank, chain = 'target') => metricValue(crank.metrics.foreignSignatures, { chain });
const unverified = (crank: BridgeCrank, chain = 'target') => metricValue(crank.metrics.signerEvidenceUnverified, { chain });
const haltedLines = (crank: BridgeCrank) => crank.logs.records().filter((record) => record['halted'] === true);
const errorLines = (crank: BridgeCrank) => crank.logs.records().filter((record) => record.level === 'error');
const normal = (b: DevnetBridge) => b.world.tokenPairs.normal.sourceMint;

/** Rewrites, while `lie.on`, every nonce account's value in getMultipleAccounts answers to one that never existed. */
function forgingNonces(lie: { on: boolean; forged: number }): RpcFetch {
  return async (input, init) => {
    const response = await globalThis.fetch(input, init);
    const body = JSON.parse(String(init?.body)) as { method: string };
    if (!lie.on || Array.isArray(body) || body.method !== 'getMultipleAccounts') return response;
    const payload = (await response.json()) as { result?: { value: Array<{ owner: string; data: [string, string] } | null> } };
    for (const account of payload.result?.value ?? []) {
      const bytes = account === null ? undefined : Buffer.from(account.data[0], 'base64');
      if (account === null || bytes?.length !== 80 || account.owner !== '11111111111111111111111111111111') continue;
      bytes.set(Buffer.from(Array.from({ length: 32 }, () => Math.floor(Math.random() * 256))), 40);
      account.data[0] = bytes.toString('base64');
      lie.forged += 1;
    }
    return new Response(JSON.stringify(payload), { status: response.status, headers: { 'content-type': 'application/json' } });
  };
}

/** Lists `replayed` (an old genuine transaction of the key) as the newest entry of every later read of the key's history. */
function replayingHistory(replayed: { signature: string | undefined }): RpcFetch {
  return async (input, init) => {
    const response = await globalThis.fetch(input, init);
    const body = JSON.parse(String(init?.body)) as { method: string; params: [string, { until?: string; minContextSlot?: number }] };
    if (replayed.signature === undefined || Array.isArray(body) || body.method !== 'getSignaturesForAddress' || body.params[1].until === undefined)
      return response;
    const payload = (await response.json()) as { result: Array<{ signature: string; slot: number }> };
    const slot = Math.max(body.params[1].minContextSlot ?? 0, ...payload.result.map((entry) => entry.slot));
    payload.result.unshift({ signature: replayed.signature, slot, err: null, memo: null, blockTime: null, confirmationStatus: 'confirmed' } as {
      signature: string;
      slot: number;
    });
    return new Response(JSON.stringify(payload), { status: response.status, headers: { 'content-type': 'application/json' } });
  };
}

describe('a second signer, proven', () => {
  it("a real twin in nonce mode: its first transaction, against the value the server first saw, is a doubt (a previous life's may be in flight); its next is caught at the next cycle by its verified transaction; the nonce move it made is that transaction's, not counted again", async () => {
    const b = (bridge = await startDevnetBridge());
    await initNonces(b, [0]);
    const a = await haltingCrank(b);
    expect(a.service.health().landing_mode).toEqual({ source: 'nonce', target: 'nonce' });
    const twin = await haltingCrank(b);
    await deposit(b, { amount: 99n, sourceMint: normal(b) });
    await twin.service.runOnce();
    await a.service.runOnce();
    expect(await foreign(a)).toBe(0);
    expect(await unverified(a)).toBe(1);
    await deposit(b, { amount: 100n, sourceMint: normal(b) });
    await twin.service.runOnce();
    expect(nextIndexOf(withdrawTracker(b), b, 0)).toBe(2);
    await a.service.runOnce();
    expect(await foreign(a)).toBe(1);
    const [, twinSignature] = loggedSignatures(twin);
    expect(haltedLines(a)).toEqual([expect.objectContaining({ chain: 'target', signature: twinSignature })]);
    expect(a.service.health().last_error).toMatch(
      new RegExp(
        `^transaction ${twinSignature}.* on the destination chain \\(slot \\d+\\) was signed with this authority's key but not by this server`,
      ),
    );
    // The nonce move it made, seen by the next read of the pool, is that transaction's: not counted again, not a doubt.
    await a.service.runOnce();
    await a.service.runOnce();
    expect(await foreign(a)).toBe(1);
    expect(await unverified(a)).toBe(1);
  }, 60_000);

  it("without history, two endpoints holding both values of a move prove it: a twin is caught from its third move (the first excused, the second's value not yet held by two)", async () => {
    const b = (bridge = await startDevnetBridge());
    await initNonces(b, [0]);
    for (const node of [b.pair.source, b.pair.target]) node.faults.set({ noHistory: true });
    const twice = (url: string) => [url, url];
    const a = await haltingCrank(b, { sourceRpcUrls: twice(b.pair.source.url), targetRpcUrls: twice(b.pair.target.url) });
    const twin = await haltingCrank(b);
    for (const amount of [100n, 101n, 102n]) {
      expect(haltedLines(a)).toEqual([]);
      await deposit(b, { amount, sourceMint: normal(b) });
      await twin.service.runOnce();
      await a.service.runOnce();
    }
    expect(nextIndexOf(withdrawTracker(b), b, 0)).toBe(3);
    expect(await foreign(a)).toBe(1);
    expect(haltedLines(a)).toEqual([
      expect.objectContaining({ chain: 'target', nonceMove: expect.objectContaining({ account: expect.any(String) }) }),
    ]);
    expect(a.service.health().last_error).toMatch(
      /^a transaction that moved nonce account \w+ from \w+ to \w+ \(two endpoints hold both values\) on the destination chain/,
    );
    expect(await unverified(a)).toBe(1);
  }, 60_000);

  it("the operator runs `nonce init` while the server runs: its transactions are the operator's (0 foreign, 0 error lines), and the next cycle lands in nonce mode", async () => {
    const b = (bridge = await startDevnetBridge());
    const a = await haltingCrank(b);
    expect(a.service.health().landing_mode).toEqual({ source: 'blockhash', target: 'blockhash' });
    const warning = a.logs.records().find((record) => String(record.msg).includes('nonce init'));
    expect(warning?.msg).toContain('it may run while this server runs');
    await Promise.all([initNonces(b, [0]), a.service.runOnce()]);
    await a.service.runOnce();
    await deposit(b, { amount: 100n, sourceMint: normal(b) });
    await a.service.runOnce();
    expect(a.service.health().landing_mode).toEqual({ source: 'nonce', target: 'nonce' });
    expect(nextIndexOf(withdrawTracker(b), b, 0)).toBe(1);
    for (const chain of ['source', 'target']) expect(await foreign(a, chain)).toBe(0);
    expect(errorLines(a)).toEqual([]);
    expect(a.service.status()).toBe('ok');
    const operatorLines = a.logs.records().filter((record) => String(record.msg).includes('only manage its own nonce accounts'));
    expect(new Set(operatorLines.map((record) => record.chain))).toEqual(new Set(['source', 'target']));
  }, 60_000);

  it('an endpoint forging nonce values: no halt even with BRIDGE_ON_FOREIGN_SIGNER=halt, the doubt counted; deposits after the lie are voted', async () => {
    const b = (bridge = await startDevnetBridge());
    await initNonces(b, [0]);
    const lie = { on: false, forged: 0 };
    const a = await haltingCrank(b, { fetch: forgingNonces(lie) });
    lie.on = true;
    for (const amount of [100n, 101n, 102n]) {
      await deposit(b, { amount, sourceMint: normal(b) });
      await a.service.runOnce();
    }
    lie.on = false;
    await a.service.runOnce();
    await a.service.runOnce();
    expect(lie.forged).toBeGreaterThan(0);
    expect(await unverified(a)).toBeGreaterThan(0);
    for (const amount of [103n, 104n]) {
      await deposit(b, { amount, sourceMint: normal(b) });
      await a.service.runOnce();
    }
    expect(haltedLines(a)).toEqual([]);
    for (const chain of ['source', 'target']) expect(await foreign(a, chain)).toBe(0);
    expect(nextIndexOf(withdrawTracker(b), b, 0)).toBe(5);
    expect(a.service.status()).toBe('ok');
  }, 60_000);

  it('a node re-listing an old genuine transaction of the key is not a second signer; a real twin afterwards still is', async () => {
    const b = (bridge = await startDevnetBridge());
    const replayed: { signature: string | undefined } = { signature: undefined };
    // An old genuine transaction of the key: a twin's vote before this server's first read.
    const earlier = await haltingCrank(b);
    await deposit(b, { amount: 100n, sourceMint: normal(b) });
    await earlier.service.runOnce();
    expect(nextIndexOf(withdrawTracker(b), b, 0)).toBe(1);
    const a = await haltingCrank(b, { fetch: replayingHistory(replayed) });
    replayed.signature = loggedSignatures(earlier)[0];
    await a.service.runOnce();
    await a.service.runOnce();
    expect(haltedLines(a)).toEqual([]);
    expect(await foreign(a)).toBe(0);
    expect(await unverified(a)).toBe(1);
    expect(a.logs.records()).toContainEqual(
      expect.objectContaining({ level: 'warn', first: replayed.signature, msg: expect.stringContaining('not new') }),
    );

    await deposit(b, { amount: 101n, sourceMint: normal(b) });
    await earlier.service.runOnce();
    expect(nextIndexOf(withdrawTracker(b), b, 0)).toBe(2);
    await a.service.runOnce();
    expect(await foreign(a)).toBe(1);
    expect(haltedLines(a)).toHaveLength(1);
  }, 60_000);
});
