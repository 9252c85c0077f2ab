import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { COMPUTE_UNIT_MARGIN, ComputeCeilings, MAX_COMPUTE_UNIT_LIMIT, USED_HEADROOM } from '../../../../src/chain/client/budget/compute-budget.js';
import { UNREAD_ACCOUNT_ALLOWANCE } from '../../../../src/chain/client/budget/loaded-accounts.js';
import { MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES, TRANSACTION_ACCOUNT_BASE_SIZE } from '../../../../src/chain/codec/compute-budget.js';
import { trackerAccountSize } from '../../../../src/chain/codec/layout.js';
import { DEFAULT_UNITS_PER_INSTRUCTION, LAMPORTS_PER_SIGNATURE, priorityFeeLamports } from '../../../../src/chain/fee-rate.js';
import { retriesAction } from '../../../../src/failure-policy.js';
import type { Logger } from '../../../../src/log/logger.js';
import { createMetrics } from '../../../../src/metrics/metrics.js';
import { metricValue } from '../../../support/metric-value.js';
import { proposal, READ_LIMITS, signal, startBridge, submitFailure, trackerHeader, type BridgeFixture } from '../bridge-fixture.js';
import type { FakeChain } from '../fake-chain.js';

/**
 * The compute budget and priority fee of crank transactions, on the scripted node's model of
 * PROTOCOL.md "Compute units and fees" (test/chain/client/fake-chain.ts).
 */

let fixture: BridgeFixture | undefined;

afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

async function start(priorityFee = { minMicroLamports: 0, maxMicroLamports: 100_000 }) {
  fixture = await startBridge({
    source: { header: trackerHeader('DepositTracker', { entryCount: 0, ownNext: 0 }), entries: [] },
    target: { header: trackerHeader('WithdrawTracker', { entryCount: 5, ownNext: 5 }), entries: [] },
    priorityFee,
  });
  return fixture;
}

const proposals = (count: number) => Array.from({ length: count }, (_, i) => proposal(5 + i));
const history = (price: number) => Array.from({ length: 150 }, (_, i) => ({ slot: 1_000 + i, prioritizationFee: price }));

/** Every transaction that landed requested at most 1.15x what it used and never passed its limit. */
function expectMeasuredLimits(chain: FakeChain): void {
  expect(chain.budgets.size).toBeGreaterThan(0);
  for (const { unitLimit, unitsConsumed } of chain.budgets.values()) {
    expect(unitsConsumed).toBeLessThanOrEqual(unitLimit);
    expect(unitLimit).toBeLessThanOrEqual(Math.ceil(unitsConsumed * (1 + COMPUTE_UNIT_MARGIN)));
  }
}

describe('measured compute', () => {
  it('requests what a simulation of the message consumed plus the margin', async () => {
    const f = await start();
    await f.chains.ackDeposits(proposals(3), signal());
    expectMeasuredLimits(f.target);
    const [budget] = f.target.budgets.values();
    // Three votes and the three budget instructions, as the node metered them.
    expect(budget!.unitsConsumed).toBe(3 * f.target.unitsPerInstruction + 3 * 150);
    expect(f.target.calls.filter((call) => call.method === 'simulateTransaction')).toHaveLength(1);
  });

  it('a batch the program meters past the largest limit is split: every vote lands, none over its limit', async () => {
    const f = await start();
    f.target.unitsPerInstruction = 144_000; // 6x ack_deposit's cost in PROTOCOL.md
    const report = await f.chains.ackDeposits(proposals(20), signal());
    expect(report.transactions.flatMap((t) => t.indices)).toEqual(proposals(20).map((v) => v.index));
    expect(report.transactions.length).toBeGreaterThanOrEqual(Math.ceil((20 * 144_000) / MAX_COMPUTE_UNIT_LIMIT));
    expectMeasuredLimits(f.target);
    expect(f.target.tracker.header.votes[1]?.nextIndex).toBe(25n);
  });

  it('a send that meets ComputationalBudgetExceeded (the program got dearer after the simulation) sends half, measured again', async () => {
    const f = await start();
    f.target.onSend = (send) => {
      if (send.count === 1 && f.target.sends.length === 1) f.target.unitsPerInstruction = 300_000;
      return 'none';
    };
    const report = await f.chains.ackDeposits(proposals(8), signal());
    expect(report.transactions.flatMap((t) => t.indices)).toEqual(proposals(8).map((v) => v.index));
    // The first send was refused in preflight, and the next because 300,000 CU per vote is above
    // the ceiling (the runtime's 200,000 reservation) until the chain refused it; the rest went
    // in batches of at most 4.
    expect(f.target.sends).toHaveLength(report.transactions.length + 2);
    expect(Math.max(...report.transactions.map((t) => t.indices.length))).toBeLessThanOrEqual(4);
    expectMeasuredLimits(f.target);
  });

  it('one instruction alone past the largest limit fails ComputationalBudgetExceeded, which is tried again', async () => {
    const f = await start();
    f.target.unitsPerInstruction = 1_500_000;
    const failure = await submitFailure(f.chains.ackDeposits(proposals(2), signal()));
    expect(failure.context).toMatchObject({ outcome: 'refused', transactionError: 'ComputationalBudgetExceeded' });
    expect(retriesAction(failure)).toBe(true);
  });
});

describe('priority fees', () => {
  it('bids the 75th percentile of the recent slots and pays it on the requested limit', async () => {
    const f = await start();
    f.target.recentFees = [...history(1_000).slice(0, 100), ...history(20_000).slice(0, 50)];
    f.target.clearingPrice = 1_000;
    await f.chains.ackDeposits(proposals(2), signal());
    const [budget] = f.target.budgets.values();
    expect(budget!.price).toBe(20_000);
    expect(await metricValue(f.metrics.priorityFee, { chain: 'target' })).toBe(20_000);
    expect(await metricValue(f.metrics.feesPaid, { chain: 'target', kind: 'base' })).toBe(LAMPORTS_PER_SIGNATURE);
    expect(await metricValue(f.metrics.feesPaid, { chain: 'target', kind: 'priority' })).toBe(priorityFeeLamports(20_000, budget!.unitLimit));
    expect(await metricValue(f.metrics.computeUnits, { chain: 'target', kind: 'requested' })).toBe(budget!.unitLimit);
    expect(await metricValue(f.metrics.computeUnits, { chain: 'target', kind: 'used' })).toBe(budget!.unitsConsumed);
  });

  it('the floor holds the bid up; the fee history a transaction writes is asked for its writable accounts', async () => {
    const f = await start({ minMicroLamports: 5_000, maxMicroLamports: 100_000 });
    await f.chains.ackDeposits(proposals(1), signal());
    expect([...f.target.budgets.values()][0]!.price).toBe(5_000);
    const [feeCall] = f.target.calls.filter((call) => call.method === 'getRecentPrioritizationFees');
    expect(feeCall!.params[0]).toContain(f.target.trackerAddress.toBase58());
  });

  it('a sudden surge the history has not seen: each expiry raises the bid, and the next attempt lands', async () => {
    const f = await start();
    f.target.recentFees = history(0);
    f.target.clearingPrice = 20_000;
    f.target.blocksPerHeightCall = 40;
    const failure = await submitFailure(f.chains.ackDeposits(proposals(1), signal()));
    expect(failure.context.outcome).toBe('not_landed');
    expect(failure.message).toContain('priority fee offered 0 micro-lamports/CU at escalation step 0 of 3');
    const report = await f.chains.ackDeposits(proposals(1), signal());
    expect(report.transactions).toHaveLength(1);
    expect(f.target.budgets.get(report.transactions[0]!.signature)!.price).toBe(25_000);
    // The history still lags: the chain's step holds for the next transactions, of any action.
    const next = await f.chains.ackDeposits(proposals(2).slice(1), signal());
    expect(f.target.budgets.get(next.transactions[0]!.signature)!.price).toBe(25_000);
  });

  it('an expiry whose every send failed (an RPC outage, not congestion) does not raise the bid', async () => {
    const f = await start();
    f.target.override = (call) => (call.method === 'sendTransaction' ? { http: 500 } : undefined);
    f.target.blocksPerHeightCall = 40;
    const failure = await submitFailure(f.chains.ackDeposits(proposals(1), signal()));
    expect(failure.context).toMatchObject({ outcome: 'not_landed', sendsAccepted: 0 });
    f.target.override = undefined;
    const report = await f.chains.ackDeposits(proposals(1), signal());
    expect(f.target.budgets.get(report.transactions[0]!.signature)!.price).toBe(0);
  });

  it('the escalation steps down after 8 landings in a row', async () => {
    const f = await start();
    f.target.recentFees = history(0);
    f.target.blocksPerHeightCall = 40;
    f.target.clearingPrice = 1;
    await submitFailure(f.chains.ackDeposits(proposals(1), signal()));
    f.target.clearingPrice = 0;
    const prices: number[] = [];
    for (let i = 0; i < 9; i++) {
      const report = await f.chains.ackDeposits([proposal(5 + i)], signal());
      prices.push(f.target.budgets.get(report.transactions[0]!.signature)!.price);
    }
    expect(prices).toEqual([...Array<number>(8).fill(25_000), 0]);
  });

  it('above the cap it never overpays: the failure names the price offered, what slots cleared and the cap', async () => {
    const f = await start({ minMicroLamports: 0, maxMicroLamports: 100_000 });
    f.target.recentFees = history(150_000);
    f.target.clearingPrice = 150_000;
    f.target.blocksPerHeightCall = 40;
    for (const step of [0, 1, 2, 3, 3]) {
      const failure = await submitFailure(f.chains.ackDeposits(proposals(1), signal()));
      expect(retriesAction(failure)).toBe(true);
      expect(failure.message).toContain(
        `priority fee offered 100000 micro-lamports/CU at escalation step ${step} of 3 (each expiry on this chain raises it); ` +
          'recent slots cleared 150000 (p75) to 150000 (max); the cap (BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS) is 100000: the going price is above the cap',
      );
    }
    expect(f.target.budgets.size).toBe(0);
    expect(await metricValue(f.metrics.feesPaid, { chain: 'target', kind: 'priority' })).toBe(0);
    expect(await metricValue(f.metrics.priorityFee, { chain: 'target' })).toBe(100_000);
  });
});

describe('compute a lying node cannot inflate', () => {
  const lyingSimulation = (f: BridgeFixture) => {
    f.target.override = (call) =>
      call.method === 'simulateTransaction'
        ? {
            result: {
              context: { slot: f.target.slot },
              value: { err: null, logs: [], accounts: null, unitsConsumed: MAX_COMPUTE_UNIT_LIMIT, returnData: null },
            },
          }
        : undefined;
  };
  const limits = (f: BridgeFixture, signatures: string[]) => signatures.map((signature) => f.target.budgets.get(signature)!.unitLimit);

  it('from the first transaction: at most the runtime reservation per vote, and the votes stay in one transaction', async () => {
    const f = await start();
    lyingSimulation(f);
    const report = await f.chains.ackDeposits(proposals(6), signal());
    expect(report.transactions).toHaveLength(1);
    expect(limits(f, [report.transactions[0]!.signature])).toEqual([6 * DEFAULT_UNITS_PER_INSTRUCTION]);
  });

  it('after one landing: at most 3x the units per vote it consumed (getTransaction), under 4x what the next one uses', async () => {
    const f = await start();
    lyingSimulation(f);
    const first = await f.chains.ackDeposits(proposals(3), signal());
    const used = f.target.budgets.get(first.transactions[0]!.signature)!.unitsConsumed;
    const lied = await f.chains.ackDeposits(proposals(6).slice(3), signal());
    const [limit] = limits(f, [lied.transactions[0]!.signature]);
    expect(limit).toBe(3 * Math.ceil((USED_HEADROOM * used) / 3));
    expect(limit).toBeLessThanOrEqual(4 * f.target.budgets.get(lied.transactions[0]!.signature)!.unitsConsumed);
    // One getTransaction per landing.
    expect(f.target.calls.filter((call) => call.method === 'getTransaction')).toHaveLength(2);
  });

  it('without history the limit it landed under teaches: at most twice the smallest limit per vote that landed', async () => {
    const f = await start();
    f.target.override = (call) =>
      call.method === 'getTransaction' ? { error: { code: -32011, message: 'Transaction history is not available from this node' } } : undefined;
    const honest = await f.chains.ackDeposits(proposals(3), signal());
    const [shown] = limits(f, [honest.transactions[0]!.signature]);
    f.target.override = (call) =>
      call.method === 'simulateTransaction'
        ? {
            result: {
              context: { slot: f.target.slot },
              value: { err: null, logs: [], accounts: null, unitsConsumed: MAX_COMPUTE_UNIT_LIMIT, returnData: null },
            },
          }
        : call.method === 'getTransaction'
          ? { error: { code: -32011, message: 'Transaction history is not available from this node' } }
          : undefined;
    const lied = await f.chains.ackDeposits(proposals(6).slice(3), signal());
    // Twice the landed limit per vote, rounded up to a whole unit per vote.
    expect(limits(f, [lied.transactions[0]!.signature])).toEqual([3 * Math.ceil((2 * shown!) / 3)]);
  });

  it('a program upgrade that makes the votes 6x dearer still lands, after one refusal for compute', async () => {
    const f = await start();
    await f.chains.ackDeposits(proposals(3), signal());
    f.target.unitsPerInstruction *= 6;
    const first = await submitFailure(f.chains.ackDeposits(proposals(4).slice(3), signal()));
    expect(first.context).toMatchObject({ outcome: 'refused', transactionError: 'ComputationalBudgetExceeded' });
    expect(retriesAction(first)).toBe(true);
    const report = await f.chains.ackDeposits(proposals(4).slice(3), signal());
    expect(report.transactions).toHaveLength(1);
    expectMeasuredLimits(f.target);
  });

  it('a simulation that fails with a program error is a refusal: nothing is signed or sent', async () => {
    const f = await start();
    const failure = await submitFailure(f.chains.ackDeposits([proposal(4)], signal()));
    expect(failure.context).toMatchObject({ outcome: 'refused', programError: 'VoteOutOfOrder', index: 4 });
    expect(failure.message).toContain('refused in simulation');
    expect(f.target.sends).toHaveLength(0);
    expect(f.target.blockhashRequests).toHaveLength(0);
  });
});

describe('the compute ceiling arithmetic (ComputeCeilings)', () => {
  it('starts at the runtime reservation and falls to 3x the units per instruction a landing consumed, never rising on a landing', () => {
    const ceilings = new ComputeCeilings();
    expect(ceilings.perInstruction('ack_deposit')).toBe(DEFAULT_UNITS_PER_INSTRUCTION);
    // The case: 4 votes asked 800,000 under a lying simulation and used 96,450.
    ceilings.used('ack_deposit', { unitsConsumed: 96_450, unitLimit: 800_000, count: 4 });
    expect(ceilings.perInstruction('ack_deposit')).toBe(Math.ceil((3 * 96_450) / 4));
    expect(4 * ceilings.perInstruction('ack_deposit')).toBeLessThanOrEqual(4 * 96_450);
    // One vote of 24,000 plus 450 for the budget instructions: 3x its use per vote, still under 4x for any count.
    ceilings.used('ack_deposit', { unitsConsumed: 24_450, unitLimit: 28_118, count: 1 });
    expect(ceilings.perInstruction('ack_deposit')).toBe(Math.ceil((3 * 96_450) / 4));
    ceilings.used('ack_deposit', { unitsConsumed: 60_000, unitLimit: 200_000, count: 1 });
    expect(ceilings.perInstruction('ack_deposit')).toBe(Math.ceil((3 * 96_450) / 4));
    // Other actions are their own.
    expect(ceilings.perInstruction('ack_withdraw')).toBe(DEFAULT_UNITS_PER_INSTRUCTION);
  });

  it('a reported use the chain contradicts is ignored (warn, bridge_compute_use_ignored_total) and the limit teaches instead: above the limit, 0, or at a limit shown too small', async () => {
    const lines: unknown[] = [];
    const logger = { warn: (object: unknown) => lines.push(object) } as unknown as Logger;
    const metrics = createMetrics(new Registry());
    const ceilings = new ComputeCeilings({ chain: 'source', logger, metrics });
    ceilings.used('cleanup_deposit', { unitsConsumed: 90_000, unitLimit: 60_000, count: 3 });
    expect(ceilings.perInstruction('cleanup_deposit')).toBe(40_000);
    ceilings.used('cleanup_deposit', { unitsConsumed: 0, unitLimit: 60_000, count: 3 });
    expect(ceilings.perInstruction('cleanup_deposit')).toBe(40_000);
    // The chain ran 2 cleanups out of compute under 50,000: 25,000 each is too little, whatever a node says later.
    ceilings.exceeded('cleanup_deposit', 50_000, 2);
    expect(ceilings.perInstruction('cleanup_deposit')).toBe(100_000);
    ceilings.used('cleanup_deposit', { unitsConsumed: 8_000, unitLimit: 100_000, count: 1 });
    expect(ceilings.perInstruction('cleanup_deposit')).toBe(100_000);
    expect(lines).toHaveLength(3);
    expect(await metricValue(metrics.computeUseIgnored, { chain: 'source' })).toBe(3);
    ceilings.used('cleanup_deposit', { unitsConsumed: 30_000, unitLimit: 100_000, count: 1 });
    expect(ceilings.perInstruction('cleanup_deposit')).toBe(90_000);
    expect(lines).toHaveLength(3);
  });
});

describe('loaded accounts data size', () => {
  // The authority, the ComputeBudget program and the token pair are not read: each counts the allowance.
  const unread = TRANSACTION_ACCOUNT_BASE_SIZE + UNREAD_ACCOUNT_ALLOWANCE;
  const tracker = TRANSACTION_ACCOUNT_BASE_SIZE + trackerAccountSize('WithdrawTracker', 1_000);

  it('every transaction asks what its accounts load: the tracker from its header, the program read once (absent here: 0)', async () => {
    const f = await start();
    await f.chains.readState(signal(), READ_LIMITS);
    await f.chains.readState(signal(), READ_LIMITS);
    const report = await f.chains.ackDeposits(proposals(3), signal());
    expect(report.transactions).toHaveLength(1);
    expect(f.target.budgets.get(report.transactions[0]!.signature)?.loadedAccountsBytes).toBe(tracker + 3 * unread);
    // The program and the RecentBlockhashes sysvar: one zero-length or 36-byte slice each, in the first cycle only.
    const programReads = f.target.calls.filter((call) => call.method === 'getAccountInfo' && call.params[0] !== f.target.trackerAddress.toBase58());
    expect(programReads.map((call) => (call.params[1] as { dataSlice: { length: number } }).dataSlice.length).sort()).toEqual([0, 36]);
  });

  it('before the programs are read, the 64 MiB default', async () => {
    const f = await start();
    const report = await f.chains.ackDeposits(proposals(1), signal());
    expect(f.target.budgets.get(report.transactions[0]!.signature)?.loadedAccountsBytes).toBe(MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES);
  });

  it('an account holding more than counted: the simulation fails, the transaction goes under 64 MiB, and the programs are read again', async () => {
    const f = await start();
    await f.chains.readState(signal(), READ_LIMITS);
    f.target.loadedAccountsBytes = tracker + 10_000;
    const report = await f.chains.ackDeposits(proposals(2), signal());
    expect(f.target.budgets.get(report.transactions[0]!.signature)?.loadedAccountsBytes).toBe(MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES);
    expect(f.target.calls.filter((call) => call.method === 'simulateTransaction')).toHaveLength(2);
    const readsBefore = f.target.calls.filter((call) => call.method === 'getAccountInfo').length;
    await f.chains.readState(signal(), READ_LIMITS);
    // The tracker's header and entries, and the program and sysvar once more.
    const programReads = f.target.calls
      .slice(readsBefore)
      .filter((call) => call.method === 'getAccountInfo' && call.params[0] !== f.target.trackerAddress.toBase58());
    expect(programReads).toHaveLength(2);
  });
});
