import { Keypair } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  MAX_TRANSFER_READS_IN_FLIGHT,
  READ_REQUESTS_PER_READ,
  TRANSFER_CACHE_MS,
  TRANSFER_READS_PER_SECOND,
} from '../../src/transfers/shared-reads.js';
import type { TestApp } from '../support/http-app.js';
import { metricValue } from '../support/metric-value.js';
import { closedPortUrl, startStalledEndpoint } from '../../devnet/rpc/silent-endpoints.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { deposit } from './support/transactions.js';
import { bridgeTransferChains, startTransfersApp, type TransferChains } from './support/transfers-app.js';

/**
 * GET /transfers as the server wires it (reads shared between requests) against a real devnet
 * and a real dead endpoint: 200 concurrent identical requests cost the RPC calls of one read per
 * TRANSFER_CACHE_MS; an RPC that refuses connections is 503 rpc_unavailable with one warning
 * per chain, not 500s with two error lines each; a stalled RPC holds the sockets of at most
 * MAX_TRANSFER_READS_IN_FLIGHT reads, and none once their clients have left.
 */

let bridge: DevnetBridge | undefined;
afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

/** The server's wiring: reads shared between requests; fetch opens one connection per concurrent request, all from 127.0.0.1. */
function startServer(chains: TransferChains, options: { rpcTimeoutMs?: number } = {}): Promise<TestApp> {
  return startTransfersApp(chains, { ...options, maxConnectionsPerAddress: 256 });
}

/** Both chains behind one (failing) URL, with a program that does not exist. */
const deadChains = (url: string): TransferChains => ({
  sourceRpcUrl: url,
  targetRpcUrl: url,
  sourceChainId: 1,
  targetChainId: 2,
  programId: Keypair.generate().publicKey,
});

async function get(url: string): Promise<{ status: number; retryAfter: string | null; body: Record<string, unknown> }> {
  const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as Record<string, unknown> };
}

describe('GET /transfers under load', () => {
  it('200 concurrent identical requests cost the RPC calls of one read per TRANSFER_CACHE_MS, not one read each', async () => {
    bridge = await startDevnetBridge();
    const mint = bridge.world.tokenPairs.normal.sourceMint;
    for (const amount of [100n, 200n, 300n]) await deposit(bridge, { amount, sourceMint: mint, recipient: Keypair.generate().publicKey.toBase58() });
    const server = await startServer(bridgeTransferChains(bridge));
    bridge.onClose(() => server.close());
    const calls = () => metricValue(server.metrics.rpcRequests);

    const before = await calls();
    expect((await get(`${server.url}/transfers?limit=500`)).status).toBe(200);
    const oneRead = (await calls()) - before;
    expect(oneRead).toBeGreaterThan(0);

    await new Promise((resolve) => setTimeout(resolve, TRANSFER_CACHE_MS));
    const start = await calls();
    const startedAt = Date.now();
    const answers = await Promise.all(Array.from({ length: 200 }, () => get(`${server.url}/transfers?limit=500`)));
    const elapsedMs = Date.now() - startedAt;
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 200 }, () => 200));
    // One read in flight, then its answer for TRANSFER_CACHE_MS: at most one read per started TRANSFER_CACHE_MS.
    const reads = ((await calls()) - start) / oneRead;
    expect(reads).toBeLessThanOrEqual(Math.ceil(elapsedMs / TRANSFER_CACHE_MS));
  });

  it(`a flood of ever new ranges costs at most ${TRANSFER_READS_PER_SECOND} reads (${TRANSFER_READS_PER_SECOND * READ_REQUESTS_PER_READ} RPC requests) a second`, async () => {
    bridge = await startDevnetBridge();
    const mint = bridge.world.tokenPairs.normal.sourceMint;
    for (const amount of [100n, 200n, 300n]) await deposit(bridge, { amount, sourceMint: mint, recipient: Keypair.generate().publicKey.toBase58() });
    const server = await startServer(bridgeTransferChains(bridge));
    bridge.onClose(() => server.close());
    const calls = () => metricValue(server.metrics.rpcRequests);

    // 32 clients, each asking again as soon as it is answered, each time a range no one asked before.
    const FLOOD_MS = 4_000;
    const start = await calls();
    const startedAt = Date.now();
    let next = 0;
    const statuses = new Map<string, number>();
    const client = async () => {
      while (Date.now() - startedAt < FLOOD_MS) {
        const key = next++;
        const response = await fetch(`${server.url}/transfers?from=${key % 4}&limit=${1 + Math.floor(key / 4)}`, {
          signal: AbortSignal.timeout(30_000),
        });
        const body = (await response.json()) as Record<string, unknown>;
        const outcome = response.status === 200 ? '200' : `${response.status} ${String(body['error'])}`;
        statuses.set(outcome, (statuses.get(outcome) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: 32 }, client));
    const elapsedS = (Date.now() - startedAt) / 1000;
    const requests = (await calls()) - start;
    // Every request was answered, or refused as busy; none failed.
    expect([...statuses.keys()].sort()).toEqual(['200', '503 transfers_busy'].filter((key) => statuses.has(key)));
    expect(statuses.get('200')).toBeGreaterThan(0);
    const bound = (Math.ceil(elapsedS * TRANSFER_READS_PER_SECOND) + 1) * READ_REQUESTS_PER_READ;
    console.log(
      `transfers flood: ${next} requests in ${elapsedS.toFixed(1)} s, ${requests} RPC requests (${(requests / elapsedS).toFixed(1)}/s; bound ${bound}), answers ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    expect(requests).toBeLessThanOrEqual(bound);
  }, 60_000);

  it('an RPC that refuses connections answers 503 rpc_unavailable with Retry-After and one warning per chain for all requests', async () => {
    const dead = await closedPortUrl();
    const server = await startServer(deadChains(dead));
    try {
      for (let i = 0; i < 5; i += 1) {
        const answer = await get(`${server.url}/transfers?from=${i}`);
        expect(answer.status).toBe(503);
        expect(answer.retryAfter).toBe('5');
        expect(answer.body['error']).toBe('rpc_unavailable');
        expect(String(answer.body['message'])).toMatch(/^the chain could not be read: /);
        expect(String(answer.body['message'])).not.toContain(new URL(dead).origin);
      }
      const records = server.logs.records();
      expect(records.filter((record) => record['level'] === 'error')).toEqual([]);
      // One warning per chain (both are dead; whichever fails first ends a read), not one per request.
      const warnings = records.filter((record) => String(record['msg']).startsWith('GET /transfers: chain RPC unavailable'));
      expect(warnings.length).toBeGreaterThanOrEqual(1);
      expect(new Set(warnings.map((record) => record['chain'])).size).toBe(warnings.length);
    } finally {
      await server.close();
    }
  }, 60_000);

  it('with a stalled RPC, 100 requests hold the upstream sockets of at most 4 reads, and none once their clients leave', async () => {
    const stalled = await startStalledEndpoint();
    const rpc = stalled.url;
    // An RPC timeout far beyond the test: only the clients leaving can free the sockets.
    const server = await startServer(deadChains(rpc), { rpcTimeoutMs: 120_000 });
    try {
      const leave = new AbortController();
      const requests = Array.from({ length: 100 }, (_, i) =>
        fetch(`${server.url}/transfers?from=${i % 10}&limit=500`, { signal: leave.signal }).then(
          async (response) => ({ status: response.status, body: (await response.json()) as Record<string, unknown> }),
          () => undefined,
        ),
      );
      // Each read starts with the two header reads, one socket per chain.
      await expect.poll(() => stalled.open, { timeout: 10_000 }).toBe(2 * MAX_TRANSFER_READS_IN_FLIGHT);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(stalled.mostOpen).toBe(2 * MAX_TRANSFER_READS_IN_FLIGHT);
      leave.abort();
      const answers = await Promise.all(requests);
      // Requests for the 6 ranges beyond the cap were refused at once; the others left.
      const refused = answers.filter((answer) => answer !== undefined);
      expect(refused.length).toBeGreaterThan(0);
      for (const answer of refused) expect(answer).toMatchObject({ status: 503, body: { error: 'transfers_busy' } });
      await expect.poll(() => stalled.open, { timeout: 10_000 }).toBe(0);
    } finally {
      await server.close();
      await stalled.close();
    }
  }, 60_000);
});
