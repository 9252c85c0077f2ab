import { Keypair } from '@solana/web3.js';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { assembleCrank } from '../../src/assemble-crank.js';
import { FileKeySigner } from '../../src/chain/client/file-key-signer.js';
import type { CrankConfig } from '../../src/config/config.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { captureLogs } from '../support/log-capture.js';
import { devnetCrankConfig } from '../support/crank-config.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';

/**
 * Issue 33, item 4, over the devnet: configuration errors met at run time are degraded with a
 * message naming the variable to fix, never "transient; it is retried".
 */

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

async function healthWith(overrides: (b: DevnetBridge) => Partial<CrankConfig>) {
  bridge = await startDevnetBridge();
  const b = bridge;
  const logs = captureLogs('info');
  const service = assembleCrank({
    config: devnetCrankConfig(b.world, 0, { rpcTimeoutMs: 2_000, ...overrides(b) }),
    signer: new FileKeySigner(b.authorities[0]!),
    logger: logs.logger,
    metrics: createMetrics(new Registry()),
  });
  b.onClose(() => service.stop(2_000));
  await service.runOnce();
  return { status: service.status(), lastError: service.health().last_error ?? '' };
}

describe('configuration errors met at run time', () => {
  it('an https:// URL to the plain-HTTP node: degraded, naming BRIDGE_SOURCE_RPC_URL', async () => {
    const { status, lastError } = await healthWith((b) => ({ sourceRpcUrl: b.pair.source.url.replace(/^http:/, 'https:') }));
    expect(status).toBe('degraded');
    expect(lastError).toMatch(/TLS handshake .* failed \(ERR_SSL_WRONG_VERSION_NUMBER\)/);
    expect(lastError).toMatch(/a configuration error, not transient: check the scheme \(https or http\) and the port of BRIDGE_SOURCE_RPC_URL/);
    expect(lastError).not.toMatch(/transient; it is retried/);
  });

  it('a node of another cluster (the destination node as the source): degraded, naming BRIDGE_SOURCE_RPC_URL', async () => {
    const { status, lastError } = await healthWith((b) => ({ sourceRpcUrl: b.pair.target.url }));
    expect(status).toBe('degraded');
    expect(lastError).toMatch(/DepositTracker \w+ does not exist on the source chain .*: a configuration error, not transient; check that BRIDGE_SOURCE_RPC_URL points at a node of the right cluster/);
    expect(lastError).not.toMatch(/transient; it is retried/);
  });

  it('a program that is not the bridge program: degraded, naming BRIDGE_TARGET_PROGRAM_ID', async () => {
    const { status, lastError } = await healthWith(() => ({ targetProgramId: Keypair.generate().publicKey.toBase58() }));
    expect(status).toBe('degraded');
    expect(lastError).toMatch(/WithdrawTracker \w+ does not exist on the destination chain .*that BRIDGE_TARGET_PROGRAM_ID is the bridge program there/);
    expect(lastError).not.toMatch(/transient; it is retried/);
  });
});
