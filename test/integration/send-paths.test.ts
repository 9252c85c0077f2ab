import { Keypair } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { LAMPORTS_PER_SIGNATURE, priorityFeeLamports } from '../../src/chain/fee-rate.js';
import { metricValue } from '../support/metric-value.js';
import { loggedSignatures, startBridgeCranks, type BridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { initNonces } from './support/nonces.js';
import { landedStatus } from './support/chain-state.js';
import { CAP, crankTransactions, crankTransactionsOn, SLOT_MS, tuning } from './support/send-paths.js';
import { depositRejected, settleWithin } from './support/settle.js';

/**
 * A congested cluster's sending side (docs/devnet.md, "Congestion: forwarding and a staked
 * path"): each chain's plain RPC endpoint, the cranks' read endpoint, forwards only 10 % of the
 * transactions it accepts to the leader; a second port of the chain, "staked", forwards all of
 * them and requires a tip. In nonce mode, with the staked port as a send-only path every vote
 * lands once, within the caps; without it votes still land, re-sent and re-priced against the
 * same nonce value, and the first-version landing rate is what alert BridgeLandingRateLow reads.
 * In blockhash mode every path gets the same signed bytes. (send-paths-accounting.test.ts: what
 * a path is credited with, tips, and the bid a restart carries.)
 */

const TIP_LAMPORTS = 2_000;
const FORWARD_SHARE = 0.1;

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

/** The bridge with nonces and `count` deposits made; then each chain's plain endpoint forwards FORWARD_SHARE. */
async function congestedBridge(count: number): Promise<DevnetBridge> {
  const b = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
  await initNonces(b, [0, 1, 2]);
  await depositRejected(b, count);
  for (const node of [b.pair.source, b.pair.target]) node.faults.set({ seed: 42, forwardShare: FORWARD_SHARE });
  return b;
}

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
});
