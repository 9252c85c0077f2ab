import { afterEach, describe, expect, it } from 'vitest';
import { LyingEndpoints } from '../../property-tests/system/liars.js';
import { startBridgeCrank, startBridgeCranks, type BridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { initNonces } from './support/nonces.js';
import { metricValue } from '../support/metric-value.js';
import { expectNoForeignSignature, expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { depositRejected, settleWithin } from './support/settle.js';

/**
 * Nonce mode on the devnet, which runs the System program's nonce instructions as Agave does:
 * `nonce init`'s work for each authority, then transfers whose every transaction is a
 * durable-nonce one, and a primary forging nonce values (a chain that loses send answers and
 * keeps transactions in flight: nonce-landing-in-flight.test.ts, which runs beside this file).
 */

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

const landedLines = (cranks: readonly BridgeCrank[]) =>
  cranks.flatMap((crank) => crank.logs.records()).filter((record) => record.msg === 'transaction landed');

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
    await expectNoForeignSignature(cranks);
  });

  it('a primary serving nonce values that never existed: every vote still lands, a dispute is a metric and a warn line, never a false second signer; a real twin is still caught', async () => {
    bridge = await startDevnetBridge();
    await initNonces(bridge, [0, 1, 2]);
    const fallbacks = { source: await bridge.pair.source.addEndpoint(), target: await bridge.pair.target.addEndpoint() };
    const liars = new LyingEndpoints();
    liars.set(bridge.pair.source.url, 'forgedNonces');
    liars.set(bridge.pair.target.url, 'forgedNonces');
    const cranks = await startBridgeCranks(bridge, [0, 1, 2], {
      fetch: liars.fetch,
      sourceRpcUrls: [bridge.pair.source.url, fallbacks.source.url],
      targetRpcUrls: [bridge.pair.target.url, fallbacks.target.url],
    });
    await depositRejected(bridge, 3);
    // Without the dispute, every vote was signed against the primary's forged value and refused
    // in preflight until the lie ended; now the next attempt signs against the fallback's value.
    await settleWithin(bridge, cranks, 8);
    expectSettled(bridge, 3);
    expect(liars.told.forgedNonces).toBeGreaterThan(0);
    await expectTransactionsAccounted(bridge, cranks);
    await expectNoForeignSignature(cranks);
    for (const crank of cranks) {
      expect(crank.service.status()).toBe('ok');
      expect(await metricValue(crank.metrics.nonceValueDisputes, { chain: 'target' })).toBeGreaterThan(0);
      const said = crank.logs.records().filter((record) => record.level === 'warn' && String(record.msg).includes('disagree on nonce account'));
      expect(said.length).toBeGreaterThan(0);
      expect(crank.logs.records().filter((record) => record.level === 'error')).toEqual([]);
    }
    // While the primary still lies, a real twin of authority 0 (a second process with its key,
    // reading the honest fallback) is still caught within its next cycles: the value its
    // transaction was signed against derives from a recent blockhash, whatever the primary served.
    const twin = startBridgeCrank(bridge, 0, { sourceRpcUrls: [fallbacks.source.url], targetRpcUrls: [fallbacks.target.url] });
    await depositRejected(bridge, 1);
    expect(await twin.service.runOnce()).toMatchObject({ ack_deposit_attempted: true });
    for (let i = 0; i < 2; i++) await cranks[0]!.service.runOnce();
    expect(await metricValue(cranks[0]!.metrics.foreignSignatures, { chain: 'target' })).toBeGreaterThanOrEqual(1);
  });
});
