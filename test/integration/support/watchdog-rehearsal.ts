import { expect } from 'vitest';
import { entryOffset } from '../../../src/chain/codec/layout.js';
import type { RpcFetch } from '../../../src/chain/rpc/rpc-fetch.js';
import { depositTracker, withdrawTracker } from './chain-state.js';
import type { DevnetBridge } from './devnet-bridge.js';
import { deposit, rawAckDeposit } from './transactions.js';

/** The watchdog's breach rehearsals on a devnet bridge (docs/devnet.md "Breach rehearsals"), shared by the in-process and the process tests. */

/** A devnet admin call over JSON-RPC, as an operator's rehearsal makes it. */
export async function devnetCall(url: string, method: string, params: unknown[]): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: Record<string, unknown>; error?: unknown };
  if (body.result === undefined) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

/**
 * The real fetch, with every getAccountInfo answer from `origin` for `account` that covers the
 * amount of entry `index` rewritten to `amount`: one node lying about one destination entry.
 */
export function lyingAbout(origin: string, account: string, index: number, amount: bigint): RpcFetch {
  const at = entryOffset('WithdrawTracker', index) + 8;
  return async (input, init) => {
    const response = await globalThis.fetch(input, init);
    const request = JSON.parse(String(init?.body)) as { method?: string; params?: [string, { dataSlice?: { offset: number; length: number } }] };
    const url = new URL(String(input instanceof Request ? input.url : input));
    if (url.origin !== origin || request.method !== 'getAccountInfo' || request.params?.[0] !== account) return response;
    const slice = request.params[1]?.dataSlice ?? { offset: 0, length: Number.MAX_SAFE_INTEGER };
    const body = (await response.json()) as { result?: { value?: { data: [string, string] } | null } };
    const value = body.result?.value;
    if (value !== null && value !== undefined && slice.offset <= at && at + 8 <= slice.offset + slice.length) {
      const data = Buffer.from(value.data[0], 'base64');
      data.writeBigUInt64LE(amount, at - slice.offset);
      value.data[0] = data.toString('base64');
    }
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  };
}

/** Two authorities (`colluders`) propose and approve ten times a new deposit's amount: it finalizes Confirmed with the forged amount. */
export async function colludingFinalization(b: DevnetBridge, amount: bigint, colluders: readonly [number, number]): Promise<number> {
  const mint = b.world.tokenPairs.normal.sourceMint;
  await deposit(b, { amount, sourceMint: mint });
  const index = depositTracker(b).entries.length - 1;
  const { recipient } = depositTracker(b).entries[index]!;
  const forged = { index: BigInt(index), approve: true, amount: amount * 10n, recipient, sourceMint: mint };
  for (const k of colluders) await rawAckDeposit(b, k, forged);
  expect(withdrawTracker(b).entries[index]).toMatchObject({ status: 'Finalized', result: { kind: 'Confirmed', amount: amount * 10n } });
  return index;
}
