import { Keypair } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { CrankConfig } from '../../src/config/config.js';
import { startConfiguredCrank } from './support/cranks.js';
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
  const { service } = await startConfiguredCrank(bridge, overrides(bridge));
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
    expect(lastError).toMatch(
      /DepositTracker \w+ does not exist on the source chain .*: a configuration error, not transient; check that BRIDGE_SOURCE_RPC_URL points at a node of the right cluster/,
    );
    expect(lastError).not.toMatch(/transient; it is retried/);
  });

  it('a program that is not the bridge program: degraded, naming BRIDGE_TARGET_PROGRAM_ID', async () => {
    const { status, lastError } = await healthWith(() => ({ targetProgramId: Keypair.generate().publicKey.toBase58() }));
    expect(status).toBe('degraded');
    expect(lastError).toMatch(
      /WithdrawTracker \w+ does not exist on the destination chain .*that BRIDGE_TARGET_PROGRAM_ID is the bridge program there/,
    );
    expect(lastError).not.toMatch(/transient; it is retried/);
  });
});
