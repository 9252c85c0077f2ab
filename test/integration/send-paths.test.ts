import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterEach, describe, expect, it } from 'vitest';
import { LAMPORTS_PER_SIGNATURE, priorityFeeLamports } from '../../src/chain/fee-rate.js';
import { metricValue } from '../support/metric-value.js';
import { startJsonRpcServer } from '../chain/rpc/json-rpc-test-server.js';
import { loggedSignatures, startBridgeCranks, type BridgeCrank, type CrankTuning } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { initNonces } from './support/nonces.js';
import { landedStatus } from './support/chain-state.js';
import { depositRejected, settleWithin } from './support/settle.js';

/**
 * A congested cluster's sending side (docs/devnet.md, "Congestion: forwarding and a staked
 * path"): each chain's plain RPC endpoint, the cranks' read endpoint, forwards only 10 % of the
 * transactions it accepts to the leader; a second port of the chain, "staked", forwards all of
 * them and requires a tip. In nonce mode, with the staked port as a send-only path every vote
 * lands once, within the caps; without it votes still land, re-sent and re-priced against the
 * same nonce value, and the first-version landing rate is what alert BridgeLandingRateLow reads.
 */

const SLOT_MS = 10;
const CAP = 100_000;
const TIP_LAMPORTS = 2_000;
const FORWARD_SHARE = 0.1;

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

const payersOf = (b: DevnetBridge) => new Set(b.authorities.map((authority) => authority.publicKey.toBase58()));

function crankTransactionsOn(b: DevnetBridge, side: 'source' | 'target') {
  const payers = payersOf(b);
  return [...b.pair[side].bank.landedTransactions()].filter((landed) => payers.has(landed.feePayer));
}

const crankTransactions = (b: DevnetBridge) => [...crankTransactionsOn(b, 'source'), ...crankTransactionsOn(b, 'target')];

/** The bridge with nonces and `count` deposits made; then each chain's plain endpoint forwards FORWARD_SHARE. */
async function congestedBridge(count: number): Promise<DevnetBridge> {
  const b = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
  await initNonces(b, [0, 1, 2]);
  await depositRejected(b, count);
  for (const node of [b.pair.source, b.pair.target]) node.faults.set({ seed: 42, forwardShare: FORWARD_SHARE });
  return b;
}

const tuning = (config: CrankTuning['config'] = {}): CrankTuning => ({
  maxAttempts: 3,
  confirmTimeoutMs: 20_000,
  priorityFee: { minMicroLamports: 0, maxMicroLamports: CAP },
  config,
});

async function outcomes(crank: BridgeCrank, chain: 'source' | 'target'): Promise<Record<string, number>> {
  const of = (outcome: string) => metricValue(crank.metrics.landingOutcomes, { chain, outcome });
  return { first: await of('first_version'), later: await of('later_version'), notLanded: await of('not_landed') };
}

describe('send-only paths on a congested devnet (nonce mode)', () => {
  it('the plain endpoint forwards 10 %, a staked send-only path with a tip: every vote lands once, within the caps, first versions land', async () => {
    bridge = await congestedBridge(3);
    const tipAccount = Keypair.generate().publicKey.toBase58();
    const staked = { source: await bridge.pair.source.addEndpoint(), target: await bridge.pair.target.addEndpoint() };
    for (const side of ['source', 'target'] as const) {
      bridge.pair[side].airdrop(tipAccount, 1_000_000_000);
      staked[side].faults.set({ requireTip: { account: tipAccount, lamports: TIP_LAMPORTS } });
    }
    const chainLanding = (url: string) => ({ sendUrls: [url], tip: { accounts: [tipAccount], lamports: TIP_LAMPORTS } });
    const tipBefore = { source: bridge.pair.source.getAccount(tipAccount)!.lamports, target: bridge.pair.target.getAccount(tipAccount)!.lamports };
    const before = { source: crankTransactionsOn(bridge, 'source').length, target: crankTransactionsOn(bridge, 'target').length };
    const cranks = await startBridgeCranks(
      bridge,
      [0, 1, 2],
      tuning({ sendExtensions: { source: chainLanding(staked.source.url), target: chainLanding(staked.target.url) } }),
    );
    await settleWithin(bridge, cranks, 8);
    expectSettled(bridge, 3);

    const landed = crankTransactions(bridge);
    expect(landed.length).toBeGreaterThan(0);
    for (const transaction of landed) {
      expect(transaction.err).toBeNull();
      expect(transaction.computeUnitPrice).toBeLessThanOrEqual(BigInt(CAP));
      // The fee is the signature and the priority fee; the tip is a transfer beside it (below).
      expect(transaction.priorityFee).toBeLessThanOrEqual(BigInt(priorityFeeLamports(CAP, transaction.computeUnitLimit)));
      expect(transaction.fee).toBe(BigInt(LAMPORTS_PER_SIGNATURE) + transaction.priorityFee);
    }
    // Each landed transaction paid the tip once; the staked path never saw one without it.
    const tips = (side: 'source' | 'target') => bridge!.pair[side].getAccount(tipAccount)!.lamports - tipBefore[side];
    for (const side of ['source', 'target'] as const)
      expect(tips(side)).toBe(BigInt(TIP_LAMPORTS) * BigInt(crankTransactionsOn(bridge, side).length - before[side]));
    for (const crank of cranks) {
      const signatures = loggedSignatures(crank);
      expect(new Set(signatures).size).toBe(signatures.length);
      expect(signatures.every((signature) => landedStatus(bridge!, signature)?.err === null)).toBe(true);
      expect(crank.service.health().total_actions_submitted).toBe(signatures.length);
    }
    const staked0 = new URL(staked.target.url).origin;
    // The read endpoints accepted every copy too: either may have carried a landing, so neither is credited with it.
    for (const crank of cranks) {
      for (const path of [staked0, 'rpc']) expect(await metricValue(crank.metrics.sendPathLanded, { chain: 'target', path })).toBe(0);
      expect(await metricValue(crank.metrics.sendPathSends, { chain: 'target', path: staked0, outcome: 'failed' })).toBe(0);
    }
    // The staked path forwards every copy: first versions land, as they do not without it (below).
    const target = await Promise.all(cranks.map((crank) => outcomes(crank, 'target')));
    const sum = (key: string) => target.reduce((total, one) => total + one[key]!, 0);
    expect(sum('first') / (sum('first') + sum('later') + sum('notLanded'))).toBeGreaterThanOrEqual(0.9);
    const landing = cranks[0]!.service.health().landing!;
    expect(landing.target.landed).toBeGreaterThan(0);
    expect(landing.target.slots_p50).not.toBeNull();
  });

  it('without a send-only path: votes still land, re-sent and re-priced against the same nonce, and the first-version landing rate falls', async () => {
    bridge = await congestedBridge(3);
    const cranks = await startBridgeCranks(bridge, [0, 1, 2], tuning());
    await settleWithin(bridge, cranks, 8);
    expectSettled(bridge, 3);
    await expectTransactionsAccounted(bridge, cranks);
    const target = await Promise.all(cranks.map((crank) => outcomes(crank, 'target')));
    const sum = (key: string) => target.reduce((total, one) => total + one[key]!, 0);
    // Re-priced versions landed where the first was dropped: the rate is well under the alert's 0.9.
    expect(sum('later')).toBeGreaterThan(0);
    const rate = sum('first') / (sum('first') + sum('later') + sum('notLanded'));
    expect(rate).toBeLessThan(0.9);
    expect(await metricValue(cranks[0]!.metrics.transactionResigns, { chain: 'target', reason: 'repriced' })).toBeGreaterThan(0);
    for (const transaction of crankTransactions(bridge)) expect(transaction.computeUnitPrice).toBeLessThanOrEqual(BigInt(CAP));
    const health = cranks[0]!.service.health().landing!;
    expect(health.target.versions_per_landed).toBeGreaterThan(1);
  });

  it('blockhash mode: the same signed bytes to every path, one version at a time, every vote lands once', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    await depositRejected(bridge, 2);
    const staked = { source: await bridge.pair.source.addEndpoint(), target: await bridge.pair.target.addEndpoint() };
    for (const node of [bridge.pair.source, bridge.pair.target]) node.faults.set({ seed: 42, forwardShare: FORWARD_SHARE });
    const landing = { source: { sendUrls: [staked.source.url], tip: undefined }, target: { sendUrls: [staked.target.url], tip: undefined } };
    const cranks = await startBridgeCranks(bridge, [0, 1, 2], tuning({ sendExtensions: landing }));
    expect(cranks[0]!.service.health().landing_mode).toEqual({ source: 'blockhash', target: 'blockhash' });
    await settleWithin(bridge, cranks, 8);
    expectSettled(bridge, 2);
    await expectTransactionsAccounted(bridge, cranks);
    // Every version sent through the staked path landed or expired before another was signed:
    // what it carried is exactly what the read endpoints carried, so no landing is either's alone.
    for (const crank of cranks) {
      for (const chain of ['source', 'target'] as const) {
        expect(await metricValue(crank.metrics.landingOutcomes, { chain, outcome: 'later_version' })).toBe(0);
        const path = new URL(staked[chain].url).origin;
        expect(await metricValue(crank.metrics.sendPathSends, { chain, path, outcome: 'accepted' })).toBeGreaterThan(0);
        for (const credited of [path, 'rpc']) expect(await metricValue(crank.metrics.sendPathLanded, { chain, path: credited })).toBe(0);
      }
    }
  });

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
