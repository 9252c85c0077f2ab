import { ComputeBudgetProgram, Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { computeUnitPriceOf } from '../../../../src/chain/client/budget/landed-price.js';
import {
  LANDING_WINDOW_MS,
  LandingRecord,
  resignSlotsFrom,
  summarize,
  type LandingEvent,
} from '../../../../src/chain/client/submit/send/landing-record.js';
import { withCarried, bidFrom, PriorityFeeBidder } from '../../../../src/chain/client/budget/priority-fee.js';
import type { ChainRpc } from '../../../../src/chain/rpc/chain-rpc.js';
import { captureLogs } from '../../../support/log-capture.js';
import { tipAccountProblems, tipInstruction } from '../../../../src/chain/client/budget/tip.js';
import { packedFees } from '../../../../src/chain/client/submit/build/planned-fees.js';
import { LAMPORTS_PER_SIGNATURE, priorityFeeLamports } from '../../../../src/chain/fee-rate.js';
import { depositTrackerAddress, withdrawTrackerAddress } from '../../../../src/chain/pda.js';
import { nonceAddress } from '../../../../src/chain/nonce-account.js';
import { leaseAddress } from '../../../../src/chain/lease-account.js';
import { createMetrics } from '../../../../src/metrics/metrics.js';
import { metricValue } from '../../../support/metric-value.js';

/** The pure steps of landing (docs/chain-client.md, "Landing measured", "Send-only paths"). */

const landed = (slots: number, firstVersion = true, versions = 1, atMs = 0): LandingEvent => ({ atMs, slots, firstVersion, versions });
const notLanded = (versions = 1, atMs = 0): LandingEvent => ({ atMs, slots: undefined, firstVersion: false, versions });

describe('landing measured', () => {
  it('summarizes a window: first-version rate over every outcome, slot percentiles and versions of the landed', () => {
    expect(summarize([])).toEqual({
      transactions: 0,
      landed: 0,
      first_version_rate: null,
      slots_p50: null,
      slots_p90: null,
      versions_per_landed: null,
    });
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
    const history = [
      { slot: 1, prioritizationFee: 0 },
      { slot: 2, prioritizationFee: 8_000 },
    ];
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

describe('a tip beside the priority fee, to one of several accounts', () => {
  const accounts = [Keypair.generate(), Keypair.generate(), Keypair.generate()].map((key) => key.publicKey.toBase58());
  const authority = Keypair.generate().publicKey;
  const tip = { accounts, lamports: 1_000_000 };

  it('each transaction pays one account of the list, chosen by the draw', () => {
    const paidTo = (random: number) => tipInstruction(authority, tip, () => random).keys[1]!.pubkey.toBase58();
    expect([0, 0.34, 0.67, 0.999_999].map(paidTo)).toEqual([accounts[0], accounts[1], accounts[2], accounts[2]]);
    const transfer = tipInstruction(authority, tip, () => 0.5);
    expect(transfer.programId.equals(SystemProgram.programId)).toBe(true);
    expect(transfer.keys[0]!.pubkey.equals(authority)).toBe(true);
    expect(transfer.data.readBigUInt64LE(4)).toBe(1_000_000n);
  });

  it('drawn at random, every account of the list is used', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 300; i++) {
      const account = tipInstruction(authority, tip).keys[1]!.pubkey.toBase58();
      counts.set(account, (counts.get(account) ?? 0) + 1);
    }
    // Each has probability 1/3; fewer than 50 of 300 is about 10^-9 likely.
    expect([...counts.keys()].sort()).toEqual([...accounts].sort());
    for (const count of counts.values()) expect(count).toBeGreaterThan(50);
  });

  it('the planned fees add the tip to each transaction, on top of the priority fee at the cap', () => {
    const instruction = SystemProgram.transfer({ fromPubkey: authority, toPubkey: Keypair.generate().publicKey, lamports: 1 });
    const price = { capMicroLamports: 100_000, unitsPerInstruction: 30_000 };
    const withoutTip = packedFees([instruction], authority, { ...price, tipLamports: 0 });
    expect(withoutTip).toBe(LAMPORTS_PER_SIGNATURE + priorityFeeLamports(100_000, 30_000));
    expect(packedFees([instruction], authority, { ...price, tipLamports: 1_000_000 })).toBe(withoutTip + 1_000_000);
  });
});

describe('tip accounts checked at start', () => {
  const authority = Keypair.generate().publicKey;
  const program = Keypair.generate().publicKey.toBase58();
  const settings = (source: string[], target: string[]) => ({
    sourceProgramId: program,
    targetProgramId: program,
    sourceChainId: 1,
    targetChainId: 2,
    sendExtensions: {
      source: { sendUrls: [], tip: source.length === 0 ? undefined : { accounts: source, lamports: 1_000 } },
      target: { sendUrls: [], tip: target.length === 0 ? undefined : { accounts: target, lamports: 1_000 } },
    },
  });

  it('accepts the accounts a path publishes', () => {
    const published = ['4ACfpUFoaSD9bfPdeu6DBt89gB6ENTeHBXCAi87NhDEE', 'D2L6yPZ2FmmmTKPgzaMKdhu6EWZcTpLy1Vhx8uvZe7NZ'];
    expect(tipAccountProblems(settings(published, published), authority)).toEqual([]);
  });

  it('refuses the program, a sysvar, a tracker, the authority and its own accounts, naming the variable', () => {
    const programKey = new PublicKey(program);
    const source = [
      program,
      'SysvarC1ock11111111111111111111111111111111',
      depositTrackerAddress(programKey, 2).toBase58(),
      leaseAddress(authority, 1).toBase58(),
    ];
    const target = [authority.toBase58(), withdrawTrackerAddress(programKey, 1).toBase58(), nonceAddress(authority, 2, 0).toBase58()];
    const problems = tipAccountProblems(settings(source, target), authority);
    expect(problems).toEqual([
      `BRIDGE_SOURCE_TIP_ACCOUNT: ${program} is the bridge program (BRIDGE_SOURCE_PROGRAM_ID and BRIDGE_TARGET_PROGRAM_ID), not a tip account; list the tip accounts the send-only path publishes`,
      'BRIDGE_SOURCE_TIP_ACCOUNT: SysvarC1ock11111111111111111111111111111111 is the Clock sysvar, not a tip account; list the tip accounts the send-only path publishes',
      `BRIDGE_SOURCE_TIP_ACCOUNT: ${source[2]} is the DepositTracker, not a tip account; list the tip accounts the send-only path publishes`,
      `BRIDGE_SOURCE_TIP_ACCOUNT: ${source[3]} is the authority's signing lease, not a tip account; list the tip accounts the send-only path publishes`,
      `BRIDGE_TARGET_TIP_ACCOUNT: ${authority.toBase58()} is the authority itself (the key this server signs with), not a tip account; list the tip accounts the send-only path publishes`,
      `BRIDGE_TARGET_TIP_ACCOUNT: ${target[1]} is the WithdrawTracker, not a tip account; list the tip accounts the send-only path publishes`,
      `BRIDGE_TARGET_TIP_ACCOUNT: ${target[2]} is one of the authority's durable-nonce accounts, not a tip account; list the tip accounts the send-only path publishes`,
    ]);
  });
});

describe("the landing rate moves the starting bid (Drift's idea), by one step at most", () => {
  const bounds = { minMicroLamports: 0, maxMicroLamports: 100_000 };
  const rpc = {
    chain: 'target',
    getRecentPrioritizationFees: async () => [{ slot: 1, prioritizationFee: 1_000 }],
    getSignaturesForAddress: async () => [],
  } as unknown as ChainRpc;

  /** A bidder whose ten-minute landing rate is what `rate()` says, and its next bid's price. */
  function rateBidder(rate: () => number | undefined) {
    const bidder = new PriorityFeeBidder({
      rpc,
      bounds,
      metrics: createMetrics(new Registry()),
      landing: { rate },
      authority: PublicKey.default,
      logger: captureLogs().logger,
    });
    return { bidder, price: async () => (await bidder.bid([], AbortSignal.timeout(1_000))).microLamportsPerUnit };
  }

  it('below 0.9 over ten minutes the bid starts one step higher; at 0.9 or above (or too few outcomes) it does not', async () => {
    let rate: number | undefined;
    const { bidder, price } = rateBidder(() => rate);
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
    const { bidder, price } = rateBidder(() => rate);
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
