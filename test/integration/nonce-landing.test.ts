import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { FileKeySigner } from '../../src/chain/client/file-key-signer.js';
import { endpointsOptions, setUpNoncePools } from '../../src/chain/client/index.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { devnetCrankConfig } from '../support/crank-config.js';
import { startBridgeCranks, type BridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { depositRejected, settleWithin } from './support/settle.js';

/**
 * Nonce mode on the devnet, which runs the System program's nonce instructions as Agave does:
 * `nonce init`'s work for each authority, then transfers whose every transaction is a
 * durable-nonce one, through a chain that loses send answers and keeps transactions in flight.
 */

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

async function initNonces(b: DevnetBridge, slots: readonly number[]): Promise<void> {
  for (const slot of slots) {
    const config = devnetCrankConfig(b.world, slot);
    await setUpNoncePools(endpointsOptions(config, createMetrics(new Registry())), new FileKeySigner(b.authorities[slot]!), config.nonceAccounts, AbortSignal.timeout(30_000));
  }
}

const landedLines = (cranks: readonly BridgeCrank[]) => cranks.flatMap((crank) => crank.logs.records()).filter((record) => record.msg === 'transaction landed');

describe('nonce mode on the devnet', () => {
  it('nonce init, then transfers land as durable-nonce transactions: every one settles, none lands with an error', async () => {
    bridge = await startDevnetBridge();
    await initNonces(bridge, [0, 1, 2]);
    const cranks = await startBridgeCranks(bridge, [0, 1, 2]);
    expect(cranks.map((crank) => crank.service.health().landing_mode)).toEqual(Array(3).fill({ source: 'nonce', target: 'nonce' }));
    await depositRejected(bridge, 3);
    await settleWithin(bridge, cranks, 8);
    expectSettled(bridge, 3);
    expect(landedLines(cranks).length).toBeGreaterThan(0);
    await expectTransactionsAccounted(bridge, cranks);
  });

  it('lost send answers and transactions in flight 40 slots: each vote lands once, no transaction lands with an error', async () => {
    bridge = await startDevnetBridge();
    await initNonces(bridge, [0, 1, 2]);
    const cranks = await startBridgeCranks(bridge, [0, 1, 2], { confirmTimeoutMs: 20_000 });
    await depositRejected(bridge, 2);
    for (const node of [bridge.pair.source, bridge.pair.target]) node.faults.set({ loseResponses: 6, loseResponseMode: 'http504', landAfterSlots: 40 });
    await settleWithin(bridge, cranks, 10);
    for (const node of [bridge.pair.source, bridge.pair.target]) node.faults.clear();
    expectSettled(bridge, 2);
    await expectTransactionsAccounted(bridge, cranks);
  });
});
