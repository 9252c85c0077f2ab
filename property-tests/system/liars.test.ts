import { describe, expect, it } from 'vitest';
import type { RpcFetch } from '../../src/chain/rpc/rpc-fetch.js';
import { LyingEndpoints } from './liars.js';

/** The lies of liars.ts, each against canned honest answers: what a lying endpoint says, and that the other endpoint's answers pass as they came. */

const LIAR = 'http://127.0.0.1:8001';
const HONEST = 'http://127.0.0.1:8002';
const KEY = '11111111111111111111111111111112';
const NONCE_ACCOUNT = (value: number) => {
  const bytes = Buffer.alloc(80);
  bytes.fill(value, 40, 72);
  return { owner: '11111111111111111111111111111111', data: [bytes.toString('base64'), 'base64'], lamports: 1, executable: false, rentEpoch: 0 };
};

function honestNode(results: Record<string, unknown>): RpcFetch {
  return async (_input, init) => {
    const { id, method, params } = JSON.parse(String(init?.body)) as { id: number; method: string; params: unknown[] };
    const result = results[method];
    return new Response(
      JSON.stringify({ jsonrpc: '2.0', id, result: typeof result === 'function' ? (result as (p: unknown[]) => unknown)(params) : result }),
      { headers: { 'content-type': 'application/json' } },
    );
  };
}

async function call(liars: LyingEndpoints, url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await liars.fetch(url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return ((await response.json()) as { result: unknown }).result;
}

const RESULTS = {
  getSlot: 40,
  getMultipleAccounts: { context: { slot: 40 }, value: [NONCE_ACCOUNT(7), null] },
  getSignaturesForAddress: [
    { signature: 'newest', slot: 39 },
    { signature: 'older', slot: 30 },
  ],
};

/** A history node: the first read lists both entries; a read `until` the newest lists what landed after it. */
const HISTORY = {
  getSignaturesForAddress: (params: unknown[]) =>
    (params[1] as { until?: string }).until === undefined ? RESULTS.getSignaturesForAddress : [{ signature: 'later', slot: 42 }],
};

describe('lying endpoints (property-tests/system/liars.ts)', () => {
  it('inflatedSlots: every slot the liar names is far ahead; the other endpoint is unchanged; clear ends it', async () => {
    const liars = new LyingEndpoints(honestNode(RESULTS));
    liars.set(LIAR, 'inflatedSlots');
    expect(await call(liars, LIAR, 'getSlot')).toBe(1_000_040);
    expect(await call(liars, LIAR, 'getMultipleAccounts')).toMatchObject({ context: { slot: 1_000_040 } });
    expect(await call(liars, LIAR, 'getSignaturesForAddress', [KEY])).toEqual([
      { signature: 'newest', slot: 1_000_039 },
      { signature: 'older', slot: 1_000_030 },
    ]);
    expect(await call(liars, HONEST, 'getSlot')).toBe(40);
    liars.clear(LIAR);
    expect(await call(liars, LIAR, 'getSlot')).toBe(40);
    expect(liars.told.inflatedSlots).toBe(3);
  });

  it('forgedNonces: a nonce account holds a value that never existed, the same lie at every read; other accounts pass', async () => {
    const liars = new LyingEndpoints(honestNode(RESULTS));
    liars.set(LIAR, 'forgedNonces');
    const value = async () => {
      const { value: accounts } = (await call(liars, LIAR, 'getMultipleAccounts')) as { value: Array<{ data: [string] } | null> };
      expect(accounts[1]).toBeNull();
      return Buffer.from(accounts[0]!.data[0], 'base64').subarray(40, 72);
    };
    const first = await value();
    expect(first).not.toEqual(Buffer.alloc(32, 7));
    expect(await value()).toEqual(first);
  });

  it('replayedHistory: a later read (until) lists the newest entry of an earlier answer at the newest slot; a first read is left alone', async () => {
    const liars = new LyingEndpoints(honestNode(HISTORY));
    liars.set(LIAR, 'replayedHistory');
    expect(await call(liars, LIAR, 'getSignaturesForAddress', [KEY, {}])).toEqual(RESULTS.getSignaturesForAddress);
    const later = (await call(liars, LIAR, 'getSignaturesForAddress', [KEY, { until: 'newest', minContextSlot: 45 }])) as Array<{
      signature: string;
      slot: number;
    }>;
    expect(later.map(({ signature, slot }) => [signature, slot])).toEqual([
      ['newest', 45],
      ['later', 42],
    ]);
    expect(liars.told.replayedHistory).toBe(1);
  });
});
