import { afterEach, describe, expect, it } from 'vitest';
import type { CrankConfig } from '../../src/config/config.js';
import type { Metrics } from '../../src/metrics/metrics.js';
import { closedPortUrl } from '../../devnet/rpc/silent-endpoints.js';
import { metricValue } from '../support/metric-value.js';
import { startConfiguredCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';

/**
 * Issue 33, item 4, over the devnet: a fallback endpoint that is a node of another cluster (the
 * destination chain's node listed as a source endpoint) is told apart by its genesis hash,
 * compared with the primary's, or with the majority's while the primary does not answer. It
 * serves nothing, reads bridge_rpc_endpoint_up 0, is counted, and /health is degraded naming
 * BRIDGE_SOURCE_RPC_FALLBACK_URLS and the endpoint's origin, never its URL.
 */

/** A path and query as a provider's URL carries them: they must never be shown. */
const SECRET_PATH = '/v2/secret-api-key?token=hunter2';

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

async function crankWith(overrides: (b: DevnetBridge) => Promise<Partial<CrankConfig>>) {
  bridge = await startDevnetBridge();
  const crank = await startConfiguredCrank(bridge, await overrides(bridge));
  return { ...crank, foreignOrigin: new URL(bridge.pair.target.url).origin };
}

async function expectLeftOut(metrics: Metrics, endpoint: string): Promise<void> {
  expect(await metricValue(metrics.rpcEndpointClusterMismatches, { chain: 'source', endpoint })).toBeGreaterThanOrEqual(1);
  expect(await metricValue(metrics.rpcEndpointUp, { chain: 'source', endpoint })).toBe(0);
}

describe('a fallback endpoint of another cluster', () => {
  it('against the primary: left out, counted, degraded naming BRIDGE_SOURCE_RPC_FALLBACK_URLS and its origin; cycles go on on the primary', async () => {
    const { service, metrics, logs, foreignOrigin } = await crankWith(async (b) => ({
      sourceRpcFallbackUrls: [`${b.pair.target.url}${SECRET_PATH}`],
    }));
    await expect.poll(() => service.status(), { timeout: 10_000 }).toBe('degraded');
    const lastError = service.health().last_error ?? '';
    expect(lastError).toContain(`RPC endpoint ${foreignOrigin} in BRIDGE_SOURCE_RPC_FALLBACK_URLS is a node of another cluster`);
    expect(lastError).toMatch(/its genesis hash \w+ is not BRIDGE_SOURCE_RPC_URL's \(\w+\); it serves no reads or sends of the source chain/);
    expect(lastError).toMatch(/not transient: remove it from BRIDGE_SOURCE_RPC_FALLBACK_URLS/);
    await expectLeftOut(metrics, foreignOrigin);
    // Cycles read the source chain from its primary, and complete (each one asked for: a cycle
    // that met a timeout on the loaded machine is followed by the next, within the poll's bound).
    await expect
      .poll(
        async () => {
          await service.runOnce();
          return metricValue(metrics.crankCycles, { outcome: 'ok' });
        },
        { timeout: 15_000, interval: 0 },
      )
      .toBeGreaterThanOrEqual(1);
    expect(logs.text()).not.toContain('secret-api-key');
    expect(lastError).not.toContain('hunter2');
  });

  it('while the primary does not answer: the majority of the answers decides', async () => {
    const dead = await closedPortUrl();
    const { service, metrics, foreignOrigin } = await crankWith(async (b) => ({
      sourceRpcUrl: dead,
      sourceRpcFallbackUrls: [b.pair.source.url, `${b.pair.source.url}/second`, b.pair.target.url],
    }));
    await expect
      .poll(() => service.health().last_error ?? '', { timeout: 10_000 })
      .toContain(`RPC endpoint ${foreignOrigin} in BRIDGE_SOURCE_RPC_FALLBACK_URLS is a node of another cluster`);
    expect(service.health().last_error).toMatch(/is not the one most of the chain's endpoints answer \(\w+\)/);
    await expectLeftOut(metrics, foreignOrigin);
  });
});
