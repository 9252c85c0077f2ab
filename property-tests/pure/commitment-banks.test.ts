import { Keypair } from '@solana/web3.js';
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createChainRpc } from '../../src/chain/rpc/chain-rpc.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { agaveBanks, type AgaveBanks } from '../../test/chain/rpc/agave-banks.js';
import type { RpcCall } from '../../test/chain/rpc/json-rpc-test-server.js';
import { metricValue } from '../../test/support/metric-value.js';
import { checkProperty, propertyProfile } from '../support/profile.js';

/**
 * Commitment lag and abandoned forks (docs/chain-client.md, "One floor per bank"): the real
 * ChainRpc over nodes that answer as Agave's banks do (../../test/chain/rpc/agave-banks.ts),
 * each with its own confirmed lag (1 or 2 slots) and finalized 32 behind, the clock 400 ms a
 * slot, through an in-process fetch. Random interleavings of slots passing, reads at each
 * commitment, status polls, landings seen at their commitment, and landings on a fork that is
 * abandoned after they were seen `processed`. Invariant after every step: no decision rests on
 * state that was never confirmed: every floor is a slot some node's bank of that commitment has
 * reached (so no slot seen only at processed, a fork's included, is ever asked of a read), and
 * no read of honest nodes fails.
 */

const long = propertyProfile() === 'long';
const address = Keypair.fromSeed(new Uint8Array(32).fill(9)).publicKey;

type Step =
  | { kind: 'slots'; count: number; laggard: number }
  | { kind: 'read'; commitment: 'confirmed' | 'finalized' }
  | { kind: 'status' }
  | { kind: 'land'; fork: boolean };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('slots' as const), count: fc.integer({ min: 1, max: 40 }), laggard: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ kind: fc.constant('read' as const), commitment: fc.constantFrom('confirmed' as const, 'finalized' as const) }),
  fc.record({ kind: fc.constant('status' as const) }),
  fc.record({ kind: fc.constant('land' as const), fork: fc.boolean() }),
);

/** Two or three nodes behind one fake fetch, by origin. */
function cluster(lags: number[]) {
  const nodes = lags.map((confirmedLag, k) => ({ url: `http://node-${k}.test/`, banks: agaveBanks(100_000, { confirmedLag }) }));
  const carried: Array<{ commitment: string | undefined; floor: number }> = [];
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const node = nodes.find((one) => url.startsWith(one.url))!;
    const message = JSON.parse(String(init?.body)) as { id: unknown; method: string; params?: unknown[] };
    const call: RpcCall = { method: message.method, params: message.params ?? [] };
    const config = call.params.at(-1) as { commitment?: string; minContextSlot?: number } | undefined;
    if (config?.minContextSlot !== undefined) carried.push({ commitment: config.commitment, floor: config.minContextSlot });
    const reply = call.method === 'getGenesisHash' ? { result: 'GenesisHash1111111111111111111111111111111' } : node.banks.handler()(call);
    return new Response(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...reply }), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  }) as typeof globalThis.fetch;
  return { nodes, carried, fetch };
}

const highest = (nodes: Array<{ banks: AgaveBanks }>, commitment: string) => Math.max(...nodes.map(({ banks }) => banks.bankSlot(commitment)));

describe('commitment lag and abandoned forks (the real ChainRpc over Agave-like banks)', () => {
  it('no floor rests on state that was never confirmed, and no read of honest nodes fails', async () => {
    await checkProperty(
      'floors per bank',
      fc.asyncProperty(
        fc.array(fc.constantFrom(1, 2), { minLength: 2, maxLength: 3 }),
        fc.array(step, { minLength: 1, maxLength: 40 }),
        async (lags, steps) => {
          const { nodes, carried, fetch } = cluster(lags);
          let now = 1_000_000;
          const metrics = createMetrics(new Registry());
          const [primary, ...fallbacks] = nodes.map((node) => node.url);
          const rpc = createChainRpc({
            chain: 'source',
            url: primary!,
            fallbackUrls: fallbacks,
            timeoutMs: 1_000,
            maxSlotLag: 128,
            metrics,
            fetch,
            now: () => now,
          });
          const signal = new AbortController().signal;
          let landings = 0;
          for (const next of steps) {
            if (next.kind === 'slots') {
              // One node may trail the others by a slot: the nodes of a cluster are never at one height.
              for (const [k, { banks }] of nodes.entries()) banks.head += next.count - (k === next.laggard && next.count > 1 ? 1 : 0);
              now += 400 * next.count;
            } else if (next.kind === 'read') {
              await rpc.getBalance(address, next.commitment, signal);
            } else if (next.kind === 'status') {
              for (const signature of [...nodes[0]!.banks.landed.keys(), ...nodes[0]!.banks.forked.keys()])
                await rpc.getSignatureStatus(signature, { searchTransactionHistory: false }, signal);
            } else {
              // A transaction in the next block: on every node, or on a minority fork that the cluster abandons once a poll saw it processed.
              const signature = `Landing${String(landings++).padStart(80, '1')}`.slice(0, 88);
              for (const { banks } of nodes) (next.fork ? banks.forked : banks.landed).set(signature, banks.head);
              const seen = await rpc.getSignatureStatus(signature, { searchTransactionHistory: false }, signal);
              if (next.fork) {
                expect(seen.status?.confirmationStatus ?? 'processed').toBe('processed');
                for (const { banks } of nodes) banks.abandon(signature);
              }
            }
            const floor = rpc.slotFloor();
            if (floor !== undefined) expect(floor).toBeLessThanOrEqual(highest(nodes, 'confirmed'));
            for (const read of carried) {
              const bank = read.commitment === 'finalized' ? 'finalized' : 'confirmed';
              expect(read.floor).toBeLessThanOrEqual(highest(nodes, bank));
            }
          }
          expect(await metricValue(metrics.rpcSlotFloorRebases)).toBe(0);
        },
      ),
      long ? 500 : 40,
    );
  });
});
