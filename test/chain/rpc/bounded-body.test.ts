import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_ACCOUNT_SLICE_BYTES, MAX_MULTIPLE_ACCOUNTS, MAX_RESPONSE_BYTES, readBoundedBody } from '../../../src/chain/rpc/bounded-body.js';
import { createChainRpc } from '../../../src/chain/rpc/chain-rpc.js';
import { MAX_SLICE_BYTES } from '../../../src/chain/client/read/tracker-reader.js';
import { isBridgeError } from '../../../src/errors.js';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { PublicKey } from '@solana/web3.js';

/**
 * A node answering with a huge body (streamed lazily, 400 MiB if read to the end) costs the
 * server at most the response limit: the body is refused while it streams.
 */

const MIB = 1024 * 1024;
let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

/** Answers every request with `totalBytes` of JSON-looking filler, written only as the client reads. */
async function startHugeBodyNode(totalBytes: number, declareLength: boolean): Promise<{ url: string; sent: () => number }> {
  let sent = 0;
  server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', ...(declareLength ? { 'content-length': String(totalBytes) } : {}) });
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const pump = (): void => {
      while (sent < totalBytes) {
        sent += chunk.length;
        if (!response.write(chunk)) {
          response.once('drain', pump);
          return;
        }
      }
      response.end();
    };
    response.on('close', () => response.removeAllListeners('drain'));
    pump();
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1/SECRET-KEY`, sent: () => sent };
}

describe('bounded JSON-RPC responses', () => {
  it('the limit follows from the most account data one read asks for: twice its base64 JSON, about 253 KiB', () => {
    expect(MAX_SLICE_BYTES).toBe(MAX_ACCOUNT_SLICE_BYTES);
    expect(MAX_RESPONSE_BYTES).toBeGreaterThan((MAX_ACCOUNT_SLICE_BYTES * 4) / 3);
    expect(MAX_RESPONSE_BYTES).toBe(258_736);
  });

  it('the largest getMultipleAccounts the client may ask (100 addresses, 64 KiB of slices, every number at 20 digits) answers within half the limit', () => {
    const length = Math.floor(MAX_ACCOUNT_SLICE_BYTES / MAX_MULTIPLE_ACCOUNTS);
    // u64::MAX as a JS number (its nearest double, 2^64): JSON.stringify writes it in 20 digits.
    const u64 = 2 ** 64;
    const account = {
      data: [Buffer.alloc(length, 0xff).toString('base64'), 'base64'],
      executable: false,
      lamports: u64,
      owner: '1'.repeat(44),
      rentEpoch: u64,
      space: u64,
    };
    const answer = {
      jsonrpc: '2.0',
      id: '00000000-0000-0000-0000-000000000000',
      result: { context: { apiVersion: '2.3.13', slot: u64 }, value: Array.from({ length: MAX_MULTIPLE_ACCOUNTS }, () => account) },
    };
    expect(JSON.stringify(answer).length).toBeLessThanOrEqual(MAX_RESPONSE_BYTES / 2);
  });

  it('readBoundedBody keeps a body at the limit and refuses one byte more', async () => {
    const at = new Response('x'.repeat(100));
    expect(await readBoundedBody(at, 100)).toEqual({ kind: 'text', text: 'x'.repeat(100) });
    expect(await readBoundedBody(new Response('x'.repeat(101)), 100)).toEqual({ kind: 'too_large', receivedBytes: 101 });
    const declared = new Response('x', { headers: { 'content-length': '5000' } });
    expect(await readBoundedBody(declared, 100)).toEqual({ kind: 'too_large', receivedBytes: 5000 });
  });

  it.each([
    { declareLength: false, what: 'streamed without a length' },
    { declareLength: true, what: 'with a Content-Length of 400 MiB' },
  ])('getAccountInfo answered with 400 MiB $what: refused early, naming chain, method and origin; memory stays flat', async ({ declareLength }) => {
    const node = await startHugeBodyNode(400 * MIB, declareLength);
    const metrics = createMetrics(new Registry());
    const rpc = createChainRpc({ chain: 'source', url: node.url, timeoutMs: 10_000, metrics });
    const rssBefore = process.memoryUsage().rss;
    const err = await rpc
      .getAccountInfo(PublicKey.default, { commitment: 'confirmed', dataSlice: { offset: 0, length: 848 } }, new AbortController().signal)
      .then(
        () => undefined,
        (failure: unknown) => failure,
      );
    const rssGrowth = process.memoryUsage().rss - rssBefore;
    expect(isBridgeError(err, 'CHAIN__RPC_FAILED')).toBe(true);
    const { message, context } = err as Error & { context: Record<string, unknown> };
    expect(message).toMatch(
      /^getAccountInfo on the source chain RPC \(BRIDGE_SOURCE_RPC_URL\) failed: the response from http:\/\/127\.0\.0\.1:\d+ was too large: \d+ bytes received, above the 258736-byte limit of one answer/,
    );
    expect(message).not.toContain('SECRET-KEY');
    expect(context).toMatchObject({ chain: 'source', method: 'getAccountInfo', kind: 'too_large' });
    // The node wrote a small multiple of the limit (socket buffers), never the whole body.
    expect(node.sent()).toBeLessThan(40 * MIB);
    expect(rssGrowth).toBeLessThan(64 * MIB);
    const errors = (await metrics.rpcErrors.get()).values.filter((value) => value.labels.kind === 'too_large');
    expect(errors.reduce((sum, value) => sum + value.value, 0)).toBeGreaterThanOrEqual(1);
  });
});
