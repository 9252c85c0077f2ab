import { Keypair } from '@solana/web3.js';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createChainRpc } from '../../../src/chain/rpc/chain-rpc.js';
import { isBridgeError } from '../../../src/errors.js';
import { retriesAction } from '../../../src/failure-policy.js';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { rejection } from '../../support/rejection.js';
import { startJsonRpcServer, type JsonRpcTestServer } from './json-rpc-test-server.js';

// Issue 33, item 4: an https:// URL to a plain-HTTP node was logged every cycle as "transient;
// it is retried": a configuration error, which never heals.

let servers: JsonRpcTestServer[] = [];

afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});

const address = Keypair.fromSeed(new Uint8Array(32).fill(2)).publicKey;

async function plainNode(): Promise<JsonRpcTestServer> {
  const server = await startJsonRpcServer(() => ({ result: { context: { slot: 5 }, value: 42 } }));
  servers.push(server);
  return server;
}

const asHttps = (url: string) => url.replace(/^http:/, 'https:');

describe('an https:// URL to a plain-HTTP node', () => {
  it('is a configuration error naming the variable, never transient, and no action retries it', async () => {
    const node = await plainNode();
    const rpc = createChainRpc({ chain: 'source', url: asHttps(node.url), timeoutMs: 2_000, metrics: createMetrics(new Registry()) });
    const err = await rejection(rpc.getBalance(address, 'confirmed', new AbortController().signal));
    expect(isBridgeError(err, 'CHAIN__RPC_FAILED') && err.context.kind).toBe('tls');
    const { message } = err as Error;
    expect(message).toMatch(/the TLS handshake with https:\/\/127\.0\.0\.1:\d+ failed \(ERR_SSL_WRONG_VERSION_NUMBER\)/);
    expect(message).toMatch(/an https:\/\/ URL to a plain-HTTP node\?/);
    expect(message).toMatch(/a configuration error, not transient: check the scheme \(https or http\) and the port of BRIDGE_SOURCE_RPC_URL/);
    expect(message).not.toMatch(/transient; it is retried/);
    expect(retriesAction(err)).toBe(false);
    // The request never reached the node as JSON-RPC.
    expect(node.calls).toHaveLength(0);
  });

  it('as the primary, with a working fallback: the read moves on to the fallback', async () => {
    const node = await plainNode();
    const rpc = createChainRpc({
      chain: 'target',
      url: asHttps(node.url),
      fallbackUrls: [node.url],
      timeoutMs: 2_000,
      metrics: createMetrics(new Registry()),
    });
    await expect(rpc.getBalance(address, 'confirmed', new AbortController().signal)).resolves.toBe(42);
  });
});
