import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterEach, describe, expect, it } from 'vitest';
import { LAMPORTS_PER_SIGNATURE } from '../../src/chain/fee-rate.js';
import { metricValue } from '../support/metric-value.js';
import { startJsonRpcServer } from '../chain/rpc/json-rpc-test-server.js';
import { startBridgeCranks } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled } from './support/expectations.js';
import { initNonces } from './support/nonces.js';
import { CAP, crankTransactions, crankTransactionsOn, SLOT_MS, tuning } from './support/send-paths.js';
import { depositRejected, settleWithin } from './support/settle.js';

/**
 * What a send-only path is credited with and what sending costs (docs/devnet.md, "Congestion:
 * forwarding and a staked path"; send-paths.test.ts holds the congested cluster itself): a path
 * that drops what it accepts or answers another signature is never credited, one that alone
 * carried the votes is; a tip is paid beside the fee, to one of its accounts; and a restart under
 * a surge the fee history hides bids where the last process left off.
 */

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

describe('send-only paths: credit, tips and the carried bid', () => {
  it('a path that drops everything it accepts, or answers another signature, is never credited; a path that alone carried the votes is', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    await depositRejected(bridge, 2);
    const dropper = { source: await bridge.pair.source.addEndpoint(), target: await bridge.pair.target.addEndpoint() };
    for (const side of ['source', 'target'] as const) dropper[side].faults.set({ dropTransactions: 1_000_000 });
    const wrongSignature = await startJsonRpcServer(() => ({ result: bs58.encode(new Uint8Array(64).fill(7)) }));
    try {
      const landing = (side: 'source' | 'target') => ({ sendUrls: [dropper[side].url, wrongSignature.url], tip: undefined });
      const cranks = await startBridgeCranks(bridge, [0, 1, 2], tuning({ sendExtensions: { source: landing('source'), target: landing('target') } }));
      await settleWithin(bridge, cranks, 8);
      expectSettled(bridge, 2);
      const wrongLabel = new URL(wrongSignature.url).origin;
      for (const crank of cranks) {
        for (const chain of ['source', 'target'] as const) {
          const dropLabel = new URL(dropper[chain].url).origin;
          // The dropper answered each transaction's own signature: accepted, and never credited.
          expect(await metricValue(crank.metrics.sendPathSends, { chain, path: dropLabel, outcome: 'accepted' })).toBeGreaterThan(0);
          expect(await metricValue(crank.metrics.sendPathLanded, { chain, path: dropLabel })).toBe(0);
          expect(await metricValue(crank.metrics.sendPathSends, { chain, path: wrongLabel, outcome: 'accepted' })).toBe(0);
          expect(await metricValue(crank.metrics.sendPathLanded, { chain, path: wrongLabel })).toBe(0);
        }
        expect(crank.logs.records().some((line) => String(line.msg).includes('answered another signature'))).toBe(true);
      }
    } finally {
      await wrongSignature.close();
    }

    // The read endpoints refuse every send (HTTP 500): what lands now was carried by the staked path alone.
    await bridge.close();
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    await depositRejected(bridge, 1);
    const alone = { source: await bridge.pair.source.addEndpoint(), target: await bridge.pair.target.addEndpoint() };
    for (const node of [bridge.pair.source, bridge.pair.target])
      node.faults.set({ methods: { sendTransaction: { errorRate: 1, errorKind: 'http500' } } });
    const landing = (side: 'source' | 'target') => ({ sendUrls: [alone[side].url], tip: undefined });
    const cranks = await startBridgeCranks(bridge, [0, 1, 2], tuning({ sendExtensions: { source: landing('source'), target: landing('target') } }));
    await settleWithin(bridge, cranks, 8);
    expectSettled(bridge, 1);
    const credited = await Promise.all(
      cranks.map((crank) => metricValue(crank.metrics.sendPathLanded, { chain: 'target', path: new URL(alone.target.url).origin })),
    );
    const landedVotes = await Promise.all(
      cranks.map((crank) => metricValue(crank.metrics.landingOutcomes, { chain: 'target', outcome: 'first_version' })),
    );
    expect(credited.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(credited).toEqual(landedVotes);
  });

  it('a tip beside the fee: under a price floor the market shows, with the largest documented minimum tip at the default cap, every transaction bids the market and pays the tip on top, to one of three accounts', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    await depositRejected(bridge, 3);
    // Leaders take nothing below 20,000 micro-lamports/CU, and the fee history shows it.
    for (const node of [bridge.pair.source, bridge.pair.target]) node.faults.set({ priceFloor: 20_000 });
    const accounts = [Keypair.generate(), Keypair.generate(), Keypair.generate()].map((key) => key.publicKey.toBase58());
    const TIP = 1_000_000;
    for (const side of ['source', 'target'] as const) for (const account of accounts) bridge.pair[side].airdrop(account, 1_000_000_000);
    const balances = (side: 'source' | 'target') => accounts.map((account) => bridge!.pair[side].getAccount(account)!.lamports);
    const before = { source: balances('source'), target: balances('target') };
    const landedBefore = { source: crankTransactionsOn(bridge, 'source').length, target: crankTransactionsOn(bridge, 'target').length };
    const tip = { accounts, lamports: TIP };
    // The default cap: a tip counted within it (100,000 x ~30,000 CU / 10^6 = ~3,000 lamports) left a price of 0, below the floor.
    const cranks = await startBridgeCranks(
      bridge,
      [0, 1, 2],
      tuning({ sendExtensions: { source: { sendUrls: [], tip }, target: { sendUrls: [], tip } } }),
    );
    await settleWithin(bridge, cranks, 8);
    expectSettled(bridge, 3);
    for (const side of ['source', 'target'] as const) {
      const landed = crankTransactionsOn(bridge, side).slice(landedBefore[side]);
      expect(landed.length).toBeGreaterThan(0);
      for (const transaction of landed) {
        expect(transaction.err).toBeNull();
        expect(transaction.computeUnitPrice).toBeGreaterThanOrEqual(20_000n);
        expect(transaction.computeUnitPrice).toBeLessThanOrEqual(BigInt(CAP));
        expect(transaction.fee).toBe(BigInt(LAMPORTS_PER_SIGNATURE) + transaction.priorityFee);
      }
      // Each landed transaction paid one tip, to one of the three accounts.
      const received = balances(side).map((balance, i) => balance - before[side][i]!);
      for (const amount of received) expect(amount % BigInt(TIP)).toBe(0n);
      expect(received.reduce((a, b) => a + b, 0n)).toBe(BigInt(TIP) * BigInt(landed.length));
    }
  });

  it('a restart under a surge the fee history hides bids where the last process left off: its first version lands', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    await initNonces(bridge, [0]);
    await depositRejected(bridge, 1);
    for (const node of [bridge.pair.source, bridge.pair.target]) node.faults.set({ priceFloor: 20_000, feeHistory: 'minimum' });
    const [first] = await startBridgeCranks(bridge, [0], tuning());
    await first!.service.runOnce();
    // The first process ramped up from the history's 0: re-priced versions landed at cap/4.
    expect(await metricValue(first!.metrics.landingOutcomes, { chain: 'target', outcome: 'later_version' })).toBeGreaterThan(0);
    await first!.service.stop(2_000);

    // The user's deposit bids nothing: the surge pauses for it (the history still shows none).
    for (const node of [bridge.pair.source, bridge.pair.target]) node.faults.set({ priceFloor: 0 });
    await depositRejected(bridge, 1);
    for (const node of [bridge.pair.source, bridge.pair.target]) node.faults.set({ priceFloor: 20_000 });
    const [second] = await startBridgeCranks(bridge, [0], tuning());
    await second!.service.runOnce();
    const restored = second!.logs
      .records()
      .filter((record) => record.msg === 'the bid starts at the price the last landed transaction of this authority paid');
    expect(restored.map((record) => record['price'])).toContain(25_000);
    expect(await metricValue(second!.metrics.landingOutcomes, { chain: 'target', outcome: 'first_version' })).toBeGreaterThan(0);
    expect(await metricValue(second!.metrics.landingOutcomes, { chain: 'target', outcome: 'later_version' })).toBe(0);
    expect(await metricValue(second!.metrics.transactionResigns, { chain: 'target' })).toBe(0);
    for (const transaction of crankTransactions(bridge)) expect(transaction.computeUnitPrice).toBeLessThanOrEqual(BigInt(CAP));
  });
});
