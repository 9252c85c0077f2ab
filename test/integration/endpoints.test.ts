import { afterEach, describe, expect, it } from 'vitest';
import { nextIndexOf, withdrawTracker } from './support/chain-state.js';
import { runRound, startBridgeCranks, type BridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { closedPortUrl, startStalledEndpoint, type StalledEndpoint } from '../../devnet/rpc/silent-endpoints.js';
import { deposit } from './support/transactions.js';

/**
 * One of two endpoints of each chain is dead or stalled; the other is the devnet node. The
 * cranks read from and send to the live one, every transfer completes, no vote lands twice,
 * and every fee paid matches a transaction the crank counted.
 */

let bridge: DevnetBridge | undefined;
const stalled: StalledEndpoint[] = [];

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
  await Promise.all(stalled.splice(0).map((endpoint) => endpoint.close()));
});

async function settle(b: DevnetBridge, cranks: readonly BridgeCrank[], count: number): Promise<void> {
  for (let i = 0; i < count; i++) await deposit(b, { amount: 100n + BigInt(i), sourceMint: b.world.tokenPairs.frozen.sourceMint });
  for (let round = 0; round < 4; round++) {
    await runRound(cranks);
    for (const crank of cranks) expect(crank.service.health().last_error).toBeNull();
  }
  expectSettled(b, count);
  for (const crank of cranks) expect(nextIndexOf(withdrawTracker(b), b, crank.slot)).toBe(count);
  await expectTransactionsAccounted(b, cranks);
}

async function upGauge(crank: BridgeCrank, endpoint: string): Promise<number | undefined> {
  return (await crank.metrics.rpcEndpointUp.get()).values.find((value) => value.labels.endpoint === endpoint)?.value;
}

describe('several endpoints per chain', () => {
  it('the primary of each chain is dead (closed port): the fallback serves, the primary is taken out', async () => {
    bridge = await startDevnetBridge();
    const dead = await closedPortUrl();
    const { source, target } = bridge.pair;
    const cranks = await startBridgeCranks(bridge, [0, 1, 2], {
      sourceRpcUrls: [dead, source.url],
      targetRpcUrls: [dead, target.url],
    });
    await settle(bridge, cranks, 3);
    for (const crank of cranks) expect(await upGauge(crank, new URL(dead).origin)).toBe(0);
  });

  it('the primary of each chain lags 200 slots: demoted once probed (up 0), the fallback serves', async () => {
    bridge = await startDevnetBridge();
    const { source, target } = bridge.pair;
    source.advanceSlots(400);
    target.advanceSlots(400);
    const laggingSource = await source.addEndpoint();
    const laggingTarget = await target.addEndpoint();
    laggingSource.faults.set({ slotLag: 200 });
    laggingTarget.faults.set({ slotLag: 200 });
    const cranks = await startBridgeCranks(bridge, [0, 1, 2], {
      sourceRpcUrls: [laggingSource.url, source.url],
      targetRpcUrls: [laggingTarget.url, target.url],
    });
    await settle(bridge, cranks, 3);
    for (const crank of cranks) {
      expect(await upGauge(crank, new URL(laggingSource.url).origin)).toBe(0);
      expect(await upGauge(crank, new URL(source.url).origin)).toBe(1);
    }
  });

  it('the primary of each chain is stalled (accepts, never answers): reads time out once, then the fallback serves', async () => {
    bridge = await startDevnetBridge();
    const source = await startStalledEndpoint();
    const target = await startStalledEndpoint();
    stalled.push(source, target);
    const cranks = await startBridgeCranks(bridge, [0, 1, 2], {
      rpcTimeoutMs: 300,
      sourceRpcUrls: [source.url, bridge.pair.source.url],
      targetRpcUrls: [target.url, bridge.pair.target.url],
    });
    await settle(bridge, cranks, 3);
    expect(source.accepted).toBeGreaterThan(0);
    for (const crank of cranks) expect(await upGauge(crank, new URL(source.url).origin)).toBe(0);
  });
});
