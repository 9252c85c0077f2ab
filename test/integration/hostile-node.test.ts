import { afterEach, describe, expect, it } from 'vitest';
import type { RpcFetch } from '../../src/chain/rpc/rpc-fetch.js';
import { NOTHING_ATTEMPTED, startBridgeCrank } from './support/cranks.js';
import { startCrankServer } from './support/crank-server.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { deposit } from './support/transactions.js';

/**
 * A node answering every call with a -32005 error whose message is huge and echoes a URL with an
 * API key: /health used to become a 1 MB document carrying the key. Now the text is cut to 256
 * characters, the URL to its origin. The message here is 150 KiB, under the 207,536-byte
 * response limit: a larger answer is refused unread (test/chain/rpc/bounded-body.test.ts).
 */

const ONE_MB = 1024 * 1024;
const HOSTILE_MESSAGE = `${'x'.repeat(150 * 1024)} at https://rpc.example.org/v1/SECRETKEY?api-key=SECRETKEY`;

let bridge: DevnetBridge | undefined;
afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

/** Real fetch, or while `hostile.on` a -32005 error with the 1 MB message for every request in the body. */
function hostileFetch(hostile: { on: boolean }): RpcFetch {
  return async (input, init) => {
    if (!hostile.on) return globalThis.fetch(input, init);
    const body = JSON.parse(String(init?.body)) as { id: unknown } | Array<{ id: unknown }>;
    const answer = (id: unknown) => ({ jsonrpc: '2.0', id, error: { code: -32005, message: HOSTILE_MESSAGE } });
    const payload = Array.isArray(body) ? body.map((request) => answer(request.id)) : answer(body.id);
    return new Response(JSON.stringify(payload), { status: 200, headers: { 'content-type': 'application/json' } });
  };
}

describe('a node with a 150 KiB error message echoing a keyed URL', () => {
  it('leaves /health small and free of the key, and the next good cycle acts', async () => {
    bridge = await startDevnetBridge();
    const hostile = { on: false };
    const crank = startBridgeCrank(bridge, 0, { fetch: hostileFetch(hostile), maxAttempts: 1, retryBackoffMs: 10 });
    const url = await startCrankServer(bridge, crank);
    await deposit(bridge, { amount: 500n, sourceMint: bridge.world.tokenPairs.normal.sourceMint });

    hostile.on = true;
    const bad = await fetch(`${url}/crank/once`, { method: 'POST', signal: AbortSignal.timeout(10_000) });
    expect(bad.status).toBe(200);
    const started = performance.now();
    const health = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5_000) });
    const text = await health.text();
    expect(performance.now() - started).toBeLessThan(100);
    expect(text.length).toBeLessThan(2_048);
    expect(text).not.toContain('SECRETKEY');
    const lastError = (JSON.parse(text) as { crank: { last_error: string } }).crank.last_error;
    expect(lastError).toMatch(/… \(\d+ more\)/);
    const logged = JSON.stringify(crank.logs.records());
    expect(logged).not.toContain('SECRETKEY');
    expect(logged.length).toBeLessThan(ONE_MB);

    hostile.on = false;
    const good = await fetch(`${url}/crank/once`, { method: 'POST', signal: AbortSignal.timeout(10_000) });
    expect(await good.json()).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true, role: 'active' });
    expect(crank.service.health().last_error).toBeNull();
  });
});
