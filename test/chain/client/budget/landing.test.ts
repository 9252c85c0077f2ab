import { ComputeBudgetProgram, Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { computeUnitPriceOf } from '../../../../src/chain/client/budget/landed-price.js';
import { LANDING_WINDOW_MS, LandingRecord, resignSlotsFrom, summarize, type LandingEvent } from '../../../../src/chain/client/submit/landing-record.js';
import { withCarried, bidFrom, PriorityFeeBidder } from '../../../../src/chain/client/budget/priority-fee.js';
import type { ChainRpc } from '../../../../src/chain/rpc/chain-rpc.js';
import { captureLogs } from '../../../support/log-capture.js';
import { priceWithTip } from '../../../../src/chain/client/budget/tip.js';
import { priorityFeeLamports } from '../../../../src/chain/fee-rate.js';
import { createMetrics } from '../../../../src/metrics/metrics.js';
import { metricValue } from '../../../support/metric-value.js';

/** The pure steps of landing (docs/chain-client.md, "Landing measured", "Send-only paths"). */

const landed = (slots: number, firstVersion = true, versions = 1, atMs = 0): LandingEvent => ({ atMs, slots, firstVersion, versions });
const notLanded = (versions = 1, atMs = 0): LandingEvent => ({ atMs, slots: undefined, firstVersion: false, versions });

describe('landing measured', () => {
  it('summarizes a window: first-version rate over every outcome, slot percentiles and versions of the landed', () => {
    expect(summarize([])).toEqual({ transactions: 0, landed: 0, first_version_rate: null, slots_p50: null, slots_p90: null, versions_per_landed: null });
    const events = [landed(1), landed(2), landed(1), landed(5, false, 3), notLanded(2)];
    expect(summarize(events)).toEqual({ transactions: 5, landed: 4, first_version_rate: 0.6, slots_p50: 1, slots_p90: 5, versions_per_landed: 1.5 });
  });

  it('re-signs after the p90 of first-version landings plus 2, within [2, 10]; 3 before anything landed', () => {
    expect(resignSlotsFrom([])).toBe(3);
    expect(resignSlotsFrom([notLanded(), landed(9, false)])).toBe(3);
    expect(resignSlotsFrom([landed(0), landed(0)])).toBe(2);
    expect(resignSlotsFrom([landed(1), landed(1), landed(2), landed(1)])).toBe(4);
    expect(resignSlotsFrom([landed(40)])).toBe(10);
  });

  it('keeps the last ten minutes, counts every outcome in the metrics, and says no rate below 10 outcomes', async () => {
    let now = 1_000_000;
    const metrics = createMetrics(new Registry());
    const record = new LandingRecord('target', metrics, () => now);
    for (let i = 0; i < 9; i++) record.landed(1, 0, 1);
    expect(record.rate()).toBeUndefined();
    record.notLanded(2, true);
    expect(record.rate()).toBe(0.9);
    record.landed(3, 1, 2);
    expect(record.summary()).toMatchObject({ transactions: 11, landed: 10, slots_p90: 1 });
    now += LANDING_WINDOW_MS + 1;
    expect(record.summary().transactions).toBe(0);
    expect(await metricValue(metrics.landingOutcomes, { chain: 'target', outcome: 'first_version' })).toBe(9);
    expect(await metricValue(metrics.landingOutcomes, { chain: 'target', outcome: 'later_version' })).toBe(1);
    expect(await metricValue(metrics.landingOutcomes, { chain: 'target', outcome: 'not_landed' })).toBe(1);
  });

  it('a transaction no node or path accepted (every send refused) is counted not landed, but leaves the rate the bid starts from alone', async () => {
    const metrics = createMetrics(new Registry());
    const record = new LandingRecord('target', metrics);
    for (let i = 0; i < 10; i++) record.landed(1, 0, 1);
    for (let i = 0; i < 10; i++) record.notLanded(1, false);
    expect(record.rate()).toBe(1);
    expect(await metricValue(metrics.landingOutcomes, { chain: 'target', outcome: 'not_landed' })).toBe(10);
    record.notLanded(1, true);
    expect(record.rate()).toBeCloseTo(10 / 11);
  });
});

describe('the carried price (a restart bids where it left off)', () => {
  const bounds = { minMicroLamports: 0, maxMicroLamports: 100_000 };
  it('raises a bid to the carried price, never above the cap, and never lowers it', () => {
    const bid = bidFrom([{ slot: 1, prioritizationFee: 0 }], 0, bounds);
    expect(withCarried(bid, 20_000).microLamportsPerUnit).toBe(20_000);
    expect(withCarried(bid, 500_000).microLamportsPerUnit).toBe(100_000);
    expect(withCarried(bidFrom([{ slot: 1, prioritizationFee: 0 }], 2, bounds), 20_000).microLamportsPerUnit).toBe(50_000);
  });

  it("a provider's estimate raises the market price at most to what the chain shows landed", () => {
    const history = [{ slot: 1, prioritizationFee: 0 }, { slot: 2, prioritizationFee: 8_000 }];
    expect(bidFrom(history, 0, bounds).microLamportsPerUnit).toBe(8_000);
    expect(bidFrom(history, 0, bounds, { price: 6_000, trusted: 0 }).microLamportsPerUnit).toBe(8_000);
    const quiet = [{ slot: 3, prioritizationFee: 0 }, { slot: 4, prioritizationFee: 0 }, ...history];
    expect(bidFrom(quiet, 0, bounds).microLamportsPerUnit).toBe(0);
    expect(bidFrom(quiet, 0, bounds, { price: 6_000, trusted: 0 }).microLamportsPerUnit).toBe(6_000);
    // Above what any slot cleared: believed only up to the highest cleared, or the carried price.
    expect(bidFrom(history, 0, bounds, { price: 90_000, trusted: 0 }).microLamportsPerUnit).toBe(8_000);
    expect(bidFrom(history, 0, bounds, { price: 90_000, trusted: 20_000 }).microLamportsPerUnit).toBe(20_000);
    expect(bidFrom(history, 0, bounds, { price: 900_000, trusted: 900_000 }).microLamportsPerUnit).toBe(100_000);
  });

  it('reads SetComputeUnitPrice from a signed message, and nothing from one without it', () => {
    const payer = Keypair.generate().publicKey;
    const message = (withPrice: boolean) => {
      const transaction = new Transaction({ feePayer: payer, blockhash: PublicKey.default.toBase58(), lastValidBlockHeight: 1 });
      if (withPrice) transaction.add(ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 25_000 }));
      transaction.add(SystemProgram.transfer({ fromPubkey: payer, toPubkey: PublicKey.default, lamports: 1 }));
      return transaction.serializeMessage();
    };
    expect(computeUnitPriceOf(message(true))).toBe(25_000);
    expect(computeUnitPriceOf(message(false))).toBeUndefined();
    expect(computeUnitPriceOf(new Uint8Array([1, 2, 3]))).toBeUndefined();
  });
});

describe('a tip counted within the cap', () => {
  const budget = { unitLimit: 40_000, microLamportsPerUnit: 100_000, loadedAccountsBytes: 0, unitsConsumed: 30_000 };
  const tip = (lamports: number) => ({ account: PublicKey.default.toBase58(), lamports, capMicroLamports: 100_000 });

  it('lowers the price so that priority fee plus tip stays within cap x limit', () => {
    const priced = priceWithTip(budget, tip(1_000));
    expect(priced.microLamportsPerUnit).toBe(75_000);
    expect(priorityFeeLamports(priced.microLamportsPerUnit, priced.unitLimit) + 1_000).toBeLessThanOrEqual(priorityFeeLamports(100_000, 40_000));
  });

  it('keeps a price that already fits, and bids 0 when the tip alone fills the share', () => {
    expect(priceWithTip({ ...budget, microLamportsPerUnit: 10_000 }, tip(1_000)).microLamportsPerUnit).toBe(10_000);
    expect(priceWithTip(budget, tip(10_000)).microLamportsPerUnit).toBe(0);
    expect(priceWithTip(budget, undefined)).toBe(budget);
  });
});

describe("the landing rate moves the starting bid (Drift's idea), by one step at most", () => {
  const bounds = { minMicroLamports: 0, maxMicroLamports: 100_000 };
  const rpc = {
    chain: 'target',
    getRecentPrioritizationFees: async () => [{ slot: 1, prioritizationFee: 1_000 }],
    getSignaturesForAddress: async () => [],
  } as unknown as ChainRpc;

  it('below 0.9 over ten minutes the bid starts one step higher; at 0.9 or above (or too few outcomes) it does not', async () => {
    let rate: number | undefined;
    const bidder = new PriorityFeeBidder({ rpc, bounds, metrics: createMetrics(new Registry()), landing: { rate: () => rate }, authority: PublicKey.default, logger: captureLogs().logger });
    const price = async () => (await bidder.bid([], AbortSignal.timeout(1_000))).microLamportsPerUnit;
    expect(await price()).toBe(1_000);
    rate = 0.5;
    expect(await price()).toBe(25_000);
    rate = 0.9;
    expect(await price()).toBe(1_000);
    // One expiry raised the chain's step; a low rate adds one more, never past the cap.
    bidder.expired();
    bidder.expired();
    bidder.expired();
    rate = 0.1;
    expect(await price()).toBe(100_000);
  });

  it('while every transaction lands on its first version the step comes down after 4 landings, else after 8', async () => {
    let rate: number | undefined = 1;
    const bidder = new PriorityFeeBidder({ rpc, bounds, metrics: createMetrics(new Registry()), landing: { rate: () => rate }, authority: PublicKey.default, logger: captureLogs().logger });
    const price = async () => (await bidder.bid([], AbortSignal.timeout(1_000))).microLamportsPerUnit;
    bidder.expired();
    for (let i = 0; i < 3; i++) bidder.landed();
    expect(await price()).toBe(25_000);
    bidder.landed();
    expect(await price()).toBe(1_000);
    rate = undefined;
    bidder.expired();
    for (let i = 0; i < 7; i++) bidder.landed();
    expect(await price()).toBe(25_000);
    bidder.landed();
    expect(await price()).toBe(1_000);
  });
});
