import { afterEach, describe, it } from 'vitest';
import { startBridgeCranks } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { initNonces } from './support/nonces.js';
import { expectNoForeignSignature, expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { depositRejected, settleWithin } from './support/settle.js';

/**
 * Nonce mode on the devnet, which runs the System program's nonce instructions as Agave does:
 * `nonce init`'s work for each authority, then transfers whose every transaction is a
 * durable-nonce one, through a chain that loses send answers and keeps transactions in flight
 * (the other cases: nonce-landing.test.ts).
 */

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

describe('nonce mode on the devnet', () => {
  it('lost send answers and transactions in flight 40 slots: each vote lands once, no transaction lands with an error', async () => {
    bridge = await startDevnetBridge();
    await initNonces(bridge, [0, 1, 2]);
    const cranks = await startBridgeCranks(bridge, [0, 1, 2], { confirmTimeoutMs: 20_000 });
    await depositRejected(bridge, 2);
    for (const node of [bridge.pair.source, bridge.pair.target])
      node.faults.set({ loseResponses: 6, loseResponseMode: 'http504', landAfterSlots: 40 });
    await settleWithin(bridge, cranks, 10);
    for (const node of [bridge.pair.source, bridge.pair.target]) node.faults.clear();
    expectSettled(bridge, 2);
    await expectTransactionsAccounted(bridge, cranks);
    await expectNoForeignSignature(cranks);
    // Up to 10 rounds, each after one that acted waiting out the finalized lag (0.64 s at the suite's 20 ms slots).
  }, 60_000);
});
