import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BridgeError } from '../../src/errors.js';
import { MIN_CONTEXT_SLOT_NOT_REACHED } from '../../src/failure-policy.js';
import type { BridgeView } from '../../src/chain/port/bridge-chains.js';
import { MAX_BACKLOG_CYCLES } from '../../src/machines/crank-context.js';
import type { CrankReport } from '../../src/machines/crank-types.js';
import { MAX_TIMER_DELAY_MS } from '../../src/time.js';
import { MAX_WAITING_CRANK_REQUESTS } from '../../src/machines/crank-errors.js';
import { bridgeView, CONFIRMED_FULL, deposit, deposits, finalizedWithdrawal, withdrawal } from './support/bridge-view.js';
import { fails, programError, retryableSubmitError, rpcError, type ChainsCall, type ScriptedChains } from './support/scripted-chains.js';
import { attemptLines, settle, START_SECONDS, startTestCrank, useCrankClock } from './support/test-crank.js';
import { metricValue } from '../support/metric-value.js';

const NOTHING_TO_DO = bridgeView({ deposits: [], withdrawals: [] });
const NO_WORK_REPORT: CrankReport = { ack_deposit_attempted: false, ack_withdraw_attempted: false, cleanup_attempted: 0, cleanup_completed: 0 };

/** Three deposits the destination has not seen: ack_deposit work only. */
function ackDepositWork(count = 3): BridgeView {
  return bridgeView({ deposits: deposits(count), withdrawals: [] });
}

/** Two relayable results, everything acknowledged on the destination: ack_withdraw work only. */
function ackWithdrawWork(): BridgeView {
  const source = deposits(2);
  return bridgeView({
    deposits: source,
    withdrawals: [
      finalizedWithdrawal(source[0]!, CONFIRMED_FULL(source[0]!)),
      finalizedWithdrawal(source[1]!, { kind: 'Rejected', reason: 'TokenPairFrozen' }),
    ],
    ownTargetNext: 2,
  });
}

/** Three finalized deposits waiting for cleanup: cleanup work only. */
function cleanupWork(): BridgeView {
  const source = [0, 1, 2].map((n) => deposit(n, { status: 'Finalized', result: { kind: 'Rejected', reason: 'InternalError' } }));
  return bridgeView({ deposits: source, withdrawals: source.map((d) => withdrawal(d, { status: 'Finalized' })), ownSourceNext: 3, ownTargetNext: 3 });
}

/** ack_deposit work and ack_withdraw work in the same cycle. */
function ackDepositAndWithdrawWork(): BridgeView {
  const source = deposits(2);
  return bridgeView({
    deposits: source,
    withdrawals: [finalizedWithdrawal(source[0]!, { kind: 'Rejected', reason: 'LimitExceeded' })],
    ownTargetNext: 1,
  });
}

/** The next read comes exactly `intervalMs` after the last call of the previous cycle, not before. */
async function expectNextReadAfterInterval(calls: ChainsCall[], intervalMs: number, reads: () => number): Promise<void> {
  const before = reads();
  const dueAt = calls.at(-1)!.at + intervalMs;
  await vi.advanceTimersByTimeAsync(dueAt - 1 - Date.now());
  expect(reads()).toBe(before);
  await vi.advanceTimersByTimeAsync(1);
  expect(reads()).toBe(before + 1);
}

beforeEach(useCrankClock);
afterEach(() => {
  vi.useRealTimers();
});

describe('crank cycles', () => {
  it('with nothing to do, reads once per poll interval, counted from the end of the last cycle', async () => {
    const { chains, crank, metrics, logs } = startTestCrank(NOTHING_TO_DO);
    await settle();
    expect(chains.calls.map((call) => call.method)).toEqual(['readState']);
    expect(crank.health()).toEqual({
      enabled: true,
      last_run_at: START_SECONDS,
      last_success_at: null,
      last_error: null,
      last_action: null,
      total_actions_submitted: 0,
      role: 'active',
      role_since: START_SECONDS,
      landing_mode: { source: 'blockhash', target: 'blockhash' },
      versions_in_flight: { source: 0, target: 0 },
      landing: {
        source: { transactions: 0, landed: 0, first_version_rate: null, slots_p50: null, slots_p90: null, versions_per_landed: null },
        target: { transactions: 0, landed: 0, first_version_rate: null, slots_p50: null, slots_p90: null, versions_per_landed: null },
      },
    });
    await vi.advanceTimersByTimeAsync(14_999);
    expect(chains.callsOf('readState')).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(chains.callsOf('readState')).toHaveLength(2);
    expect(crank.health().last_run_at).toBe(START_SECONDS + 15);
    expect(await metricValue(metrics.crankCycles, { outcome: 'ok' })).toBe(2);
    expect(await metricValue(metrics.crankLastRun)).toBe(START_SECONDS + 15);
    expect(attemptLines(logs)).toEqual([]);
    await crank.stop(0);
  });

  it.each<[string, () => BridgeView, CrankReport, string, number]>([
    ['ack_deposit', () => ackDepositWork(), { ...NO_WORK_REPORT, ack_deposit_attempted: true }, 'ack_deposit 0..2 (3 votes)', 1],
    ['ack_withdraw', ackWithdrawWork, { ...NO_WORK_REPORT, ack_withdraw_attempted: true }, 'ack_withdraw 0..1 (2 votes)', 1],
    ['cleanup_deposit', cleanupWork, { ...NO_WORK_REPORT, cleanup_attempted: 3, cleanup_completed: 3 }, 'cleanup_deposit 3 entries', 1],
  ])('runs %s alone when only it has work, and reports it', async (action, view, report, lastAction, transactions) => {
    const { chains, crank, metrics, logs } = startTestCrank(NOTHING_TO_DO);
    await settle();
    chains.view = view();
    await vi.advanceTimersByTimeAsync(1000);
    const answer = crank.runOnce();
    await settle();
    expect(await answer).toEqual(report);
    expect(chains.calls.map((call) => call.method).filter((method) => method !== 'readState')).toHaveLength(1);
    expect(crank.health()).toMatchObject({
      last_success_at: START_SECONDS + 1,
      last_error: null,
      last_action: lastAction,
      total_actions_submitted: transactions,
    });
    expect(attemptLines(logs)).toEqual([
      expect.objectContaining({ action, attempt: 1, outcome: 'landed', level: 'info', signatures: [expect.any(String)] }),
    ]);
    expect(await metricValue(metrics.crankSubmissions, { action, outcome: 'landed' })).toBe(1);
    expect(await metricValue(metrics.crankTransactionsLanded, { action })).toBe(transactions);
    expect(await metricValue(metrics.crankLastSuccess)).toBe(START_SECONDS + 1);
    await crank.stop(0);
  });

  it('submits exactly the planned votes: proposals for unseen deposits', async () => {
    const { chains, crank } = startTestCrank(ackDepositWork(2));
    await settle();
    expect(chains.callsOf('ackDeposits')[0]!.votes).toEqual(
      [0, 1].map((index) => ({
        index,
        approve: true,
        amount: deposit(index).amount.toString(),
        recipient: deposit(index).recipient,
        sourceMint: deposit(index).sourceMint,
      })),
    );
    await crank.stop(0);
  });

  it('counts a cleanup someone else did first as completed, not as a transaction of ours', async () => {
    const { chains, crank } = startTestCrank(NOTHING_TO_DO);
    await settle();
    chains.view = cleanupWork();
    chains.script('cleanupDeposits', async () => ({ transactions: [{ signature: 'c1', indices: [0, 2] }], completed: [0, 2], alreadyDone: [1] }));
    expect(await crank.runOnce()).toEqual({ ...NO_WORK_REPORT, cleanup_attempted: 3, cleanup_completed: 3 });
    expect(crank.health()).toMatchObject({ last_action: 'cleanup_deposit 3 entries (1 already done)', total_actions_submitted: 1 });
    await crank.stop(0);
  });

  it('retries a failed action with backoff, re-reading the trackers before each retry, then succeeds', async () => {
    const { chains, crank, metrics, logs } = startTestCrank(ackDepositWork(2));
    chains.script('ackDeposits', fails(retryableSubmitError()), fails(retryableSubmitError()));
    await settle();
    expect(chains.callsOf('ackDeposits')).toHaveLength(1);
    // Equal jitter: the first retry waits 500..1000 ms, the second 1000..2000 ms.
    await vi.advanceTimersByTimeAsync(499);
    expect(chains.callsOf('ackDeposits')).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(501);
    expect(chains.callsOf('ackDeposits')).toHaveLength(2);
    expect(crank.health().last_error).toBe(
      'retrying after a failed attempt: attempt 2 of 3 failed: ack_deposit on destination tracker T failed: transaction expired before it landed',
    );
    await vi.advanceTimersByTimeAsync(2000);
    expect(chains.calls.map((call) => call.method)).toEqual(['readState', 'ackDeposits', 'readState', 'ackDeposits', 'readState', 'ackDeposits']);
    expect(attemptLines(logs).map((line) => [line['attempt'], line['outcome'], line['level']])).toEqual([
      [1, 'failed', 'warn'],
      [2, 'failed', 'warn'],
      [3, 'landed', 'info'],
    ]);
    expect(attemptLines(logs)[0]).toMatchObject({
      err: { message: 'ack_deposit on destination tracker T failed: transaction expired before it landed' },
      indices: [0, 1],
    });
    expect(crank.health()).toMatchObject({ last_error: null, last_action: 'ack_deposit 0..1 (2 votes)', total_actions_submitted: 1 });
    expect(await metricValue(metrics.crankRetries, { action: 'ack_deposit' })).toBe(2);
    expect(await metricValue(metrics.crankSubmissions, { action: 'ack_deposit', outcome: 'failed' })).toBe(2);
    expect(await metricValue(metrics.crankCycles, { outcome: 'ok' })).toBe(1);
    await crank.stop(0);
  });

  it('gives up after BRIDGE_CRANK_MAX_ATTEMPTS, records last_error and moves on to the next action', async () => {
    const { chains, crank, metrics, logs } = startTestCrank(NOTHING_TO_DO, { maxAttempts: 2 });
    await settle();
    chains.view = ackDepositAndWithdrawWork();
    chains.script('ackDeposits', fails(retryableSubmitError()), fails(retryableSubmitError()));
    const answer = crank.runOnce();
    await vi.advanceTimersByTimeAsync(1000);
    expect(await answer).toEqual({ ...NO_WORK_REPORT, ack_deposit_attempted: true, ack_withdraw_attempted: true });
    expect(chains.calls.map((call) => call.method).slice(1)).toEqual(['readState', 'ackDeposits', 'readState', 'ackDeposits', 'ackWithdraws']);
    const health = crank.health();
    expect(health.last_error).toBe(
      'ack_deposit 1 (1 vote) failed after 2 attempts: ack_deposit on destination tracker T failed: transaction expired before it landed',
    );
    // A later success in the same cycle does not clear last_error.
    expect(health.last_action).toBe('ack_withdraw 0 (1 vote)');
    expect(health.last_success_at).not.toBeNull();
    expect(attemptLines(logs).map((line) => [line['action'], line['attempt'], line['outcome'], line['level']])).toEqual([
      ['ack_deposit', 1, 'failed', 'warn'],
      ['ack_deposit', 2, 'failed', 'error'],
      ['ack_withdraw', 1, 'landed', 'info'],
    ]);
    expect(await metricValue(metrics.crankCycles, { outcome: 'error' })).toBe(1);

    // The next cycle that completes without a failed action clears it.
    chains.view = NOTHING_TO_DO;
    await crank.runOnce();
    expect(crank.health().last_error).toBeNull();
    expect(crank.health().last_action).toBe('ack_withdraw 0 (1 vote)');
    await crank.stop(0);
  });

  it('does not retry an error no retry can fix, and counts landed batches of a failed attempt', async () => {
    const { chains, crank } = startTestCrank(NOTHING_TO_DO);
    await settle();
    chains.view = ackDepositWork(20);
    chains.script('ackDeposits', fails(retryableSubmitError('ack_deposit', ['s1', 's2'])), fails(programError('NotAnAuthority')));
    const answer = crank.runOnce();
    await vi.advanceTimersByTimeAsync(1000);
    await answer;
    expect(chains.callsOf('ackDeposits')).toHaveLength(2);
    expect(crank.health()).toMatchObject({
      total_actions_submitted: 2,
      last_error:
        'ack_deposit 0..19 (20 votes) failed after 2 attempts: ack_deposit on destination tracker T failed: the program rejected the transaction with NotAnAuthority',
    });
    await crank.stop(0);
  });

  it('ends the cycle when the tracker read fails, and sets last_error', async () => {
    const { chains, crank, metrics } = startTestCrank(ackDepositWork(), {
      before: (scripted) => scripted.script('readState', fails(rpcError(true))),
    });
    await settle();
    expect(chains.calls.map((call) => call.method)).toEqual(['readState']);
    expect(crank.health().last_error).toBe('reading the trackers failed: getAccountInfo on the source chain failed: timeout');
    expect(await metricValue(metrics.crankCycles, { outcome: 'error' })).toBe(1);
    await vi.advanceTimersByTimeAsync(15_000);
    expect(chains.callsOf('ackDeposits')).toHaveLength(1);
    expect(crank.health().last_error).toBeNull();
    await crank.stop(0);
  });

  it('a tracker read every node answered from behind the slot floor (-32016) is a warn line, not an error line; any other failed read stays an error', async () => {
    const behind = new BridgeError(
      'CHAIN__RPC_FAILED',
      { chain: 'source', method: 'getMultipleAccounts', kind: 'rpc', rpcCode: MIN_CONTEXT_SLOT_NOT_REACHED },
      { what: 'getMultipleAccounts on the source chain', reason: 'Minimum context slot has not been reached' },
    );
    const { crank, logs } = startTestCrank(ackDepositWork(), {
      before: (scripted) => scripted.script('readState', fails(behind), fails(rpcError(true))),
    });
    await settle();
    await vi.advanceTimersByTimeAsync(15_000);
    const readLines = logs.records().filter((record) => String(record.msg).startsWith('crank: reading the trackers failed'));
    expect(readLines.map((record) => record.level)).toEqual(['warn', 'error']);
    expect(readLines[0]!.msg).toContain('behind the slot this server already rests on');
    await crank.stop(0);
  });

  it('answers each queued POST /crank/once with the report of a cycle that started after it', async () => {
    const { chains, crank } = startTestCrank(ackDepositWork(1));
    const first = chains.hold();
    const second = chains.hold();
    chains.script('ackDeposits', first.reply, second.reply);
    await settle();
    await first.started;
    const a = crank.runOnce();
    first.release();
    await settle();
    // Cycle 2 runs for request a: the chain now shows one more deposit to acknowledge.
    await second.started;
    const b = crank.runOnce();
    chains.view = NOTHING_TO_DO;
    second.release();
    await settle();
    expect(await a).toEqual({ ...NO_WORK_REPORT, ack_deposit_attempted: true });
    expect(await b).toEqual(NO_WORK_REPORT);
    expect(chains.calls.map((call) => call.method)).toEqual(['readState', 'ackDeposits', 'readState', 'ackDeposits', 'readState']);
    await crank.stop(0);
  });

  it(`refuses a request beyond ${MAX_WAITING_CRANK_REQUESTS} waiting ones with CRANK__BUSY, and takes requests again once they are answered`, async () => {
    const { chains, crank } = startTestCrank(ackDepositWork(1));
    const held = chains.hold();
    chains.script('ackDeposits', held.reply);
    await settle();
    await held.started;
    const waiting = Array.from({ length: MAX_WAITING_CRANK_REQUESTS }, () => crank.runOnce());
    await expect(crank.runOnce()).rejects.toMatchObject({ code: 'CRANK__BUSY', context: { waiting: 64, limit: 64 } });
    chains.view = NOTHING_TO_DO;
    held.release();
    await settle();
    expect(await Promise.all(waiting)).toHaveLength(MAX_WAITING_CRANK_REQUESTS);
    const after = crank.runOnce();
    await settle();
    await expect(after).resolves.toEqual(NO_WORK_REPORT);
    await crank.stop(0);
  });

  it('starts a cycle on poll() when idle, and coalesces a poll() that arrives during a cycle', async () => {
    const { chains, crank } = startTestCrank(NOTHING_TO_DO, { pollIntervalMs: 60_000 });
    await settle();
    expect(chains.callsOf('readState')).toHaveLength(1);
    chains.view = ackDepositWork(1);
    const held = chains.hold();
    chains.script('ackDeposits', held.reply);
    expect(crank.poll()).toBe('started');
    await settle();
    await held.started;
    expect(crank.poll()).toBe('coalesced');
    chains.view = NOTHING_TO_DO;
    held.release();
    await settle();
    // The coalesced poll started no cycle of its own: one read for the startup cycle, one for the polled one.
    expect(chains.callsOf('readState')).toHaveLength(2);
    await crank.stop(0);
    expect(() => crank.poll()).toThrow(/stopping or stopped/);
  });

  it('starts the next cycle at once while a backlog remains, then waits the interval again', async () => {
    const { chains, crank } = startTestCrank(ackDepositWork(70));
    chains.onLanded = (call) => {
      // The destination now holds proposals up to the last landed vote.
      const landed = Math.max(...call.indices) + 1;
      chains.view = bridgeView({ deposits: deposits(70), withdrawals: deposits(landed).map((d) => withdrawal(d)), ownTargetNext: landed });
    };
    // Node (and the fake clock) runs a 0 ms timer after at most 1 ms.
    await vi.advanceTimersByTimeAsync(5);
    expect(chains.callsOf('ackDeposits').map((call) => call.indices.length)).toEqual([64, 6]);
    expect(chains.callsOf('readState')).toHaveLength(2);
    await expectNextReadAfterInterval(chains.calls, 15_000, () => chains.callsOf('readState').length);
    await crank.stop(0);
  });

  it('bounds back-to-back backlog cycles, so a backlog that never shrinks waits the interval', async () => {
    const { chains, crank } = startTestCrank(ackDepositWork(100));
    await vi.advanceTimersByTimeAsync(100);
    // The startup cycle and MAX_BACKLOG_CYCLES immediate follow-ups, then the poll interval.
    expect(chains.callsOf('readState')).toHaveLength(1 + MAX_BACKLOG_CYCLES);
    await expectNextReadAfterInterval(chains.calls, 15_000, () => chains.callsOf('readState').length);
    await crank.stop(0);
  });

  // Issue 40: a standby that stood down with work waiting read 11 times per poll interval.
  it.each([
    ['standby', { handoffMs: 3_600_000 }, () => {}],
    [
      'halted',
      { onForeignSigner: 'halt' as const, handoffMs: 0 },
      (chains: ScriptedChains) => {
        chains.authorityView.source.transactions = [{ signature: '5OtherProcess', slot: 90, signedHere: false }];
      },
    ],
    ['dry_run', { dryRun: true, handoffMs: 0 }, () => {}],
  ])('a %s crank with a backlog reads once per poll interval, and its cycles say so', async (kind, settings, arrange) => {
    const { chains, crank } = startTestCrank(NOTHING_TO_DO, { pollIntervalMs: 15_000, ...settings });
    await settle();
    chains.view = ackDepositWork(100);
    arrange(chains);
    const before = chains.callsOf('readState').length;
    // Three poll intervals (15, 30 and 45 s: inside a standby's 55 s quiet window): three reads.
    await vi.advanceTimersByTimeAsync(45_000);
    expect(chains.callsOf('readState').length - before).toBe(3);
    expect(chains.callsOf('ackDeposits')).toEqual([]);
    expect(crank.activity.snapshot().cycles[0]).toMatchObject({ kind, outcome: 'ok' });
    await crank.stop(0);
  });

  it('waits a poll interval longer than one Node timer holds without firing early', async () => {
    const interval = 3 * MAX_TIMER_DELAY_MS + 1000;
    const { chains, crank } = startTestCrank(NOTHING_TO_DO, { pollIntervalMs: interval });
    await settle();
    for (const step of [1, MAX_TIMER_DELAY_MS, MAX_TIMER_DELAY_MS, MAX_TIMER_DELAY_MS]) {
      await vi.advanceTimersByTimeAsync(step);
      expect(chains.callsOf('readState')).toHaveLength(1);
    }
    await vi.advanceTimersByTimeAsync(998);
    expect(chains.callsOf('readState')).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(chains.callsOf('readState')).toHaveLength(2);
    await crank.stop(0);
  });
});

describe('crank shutdown', () => {
  it('lets the running submission finish, submits nothing after it, and rejects queued requests', async () => {
    const { chains, crank } = startTestCrank(NOTHING_TO_DO);
    await settle();
    chains.view = ackDepositAndWithdrawWork();
    const held = chains.hold();
    chains.script('ackDeposits', held.reply);
    const running = crank.runOnce().catch((error: unknown) => error);
    const heldCall = await held.started;
    const queued = crank.runOnce();
    const stopped = crank.stop(10_000);
    await expect(queued).rejects.toMatchObject({ code: 'CRANK__STOPPED' });
    await expect(crank.runOnce()).rejects.toMatchObject({ code: 'CRANK__STOPPED' });
    held.release();
    await settle();
    await stopped;
    // The cycle was cut short at its next safe point: its request gets no report.
    expect(await running).toMatchObject({ code: 'CRANK__STOPPED' });
    expect(heldCall.signal.aborted).toBe(false);
    expect(chains.callsOf('ackWithdraws')).toEqual([]);
    expect(crank.health()).toMatchObject({ enabled: false, total_actions_submitted: 1 });
  });

  it('aborts the running submission at the deadline', async () => {
    const { chains, crank, metrics } = startTestCrank(ackDepositWork());
    const held = chains.hold();
    chains.script('ackDeposits', held.reply);
    await settle();
    const heldCall = await held.started;
    let done = false;
    const stopped = crank.stop(5000).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(4999);
    expect([done, heldCall.signal.aborted]).toEqual([false, false]);
    await vi.advanceTimersByTimeAsync(1);
    await stopped;
    expect(heldCall.signal.aborted).toBe(true);
    expect(await metricValue(metrics.crankEnabled)).toBe(0);
  });

  it('stops at once when idle, and stop() is idempotent', async () => {
    const { chains, crank } = startTestCrank(NOTHING_TO_DO);
    await settle();
    await Promise.all([crank.stop(1000), crank.stop(1000)]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(chains.callsOf('readState')).toHaveLength(1);
  });

  it('abandons a retry backoff on STOP', async () => {
    const { chains, crank } = startTestCrank(ackDepositWork());
    chains.script('ackDeposits', fails(retryableSubmitError()));
    await settle();
    await crank.stop(10_000);
    await vi.advanceTimersByTimeAsync(5000);
    expect(chains.callsOf('ackDeposits')).toHaveLength(1);
  });
});

describe('POST /crank/once requests', () => {
  it('rejects a request whose signal aborts, while its cycle still runs', async () => {
    const { chains, crank } = startTestCrank(ackDepositWork(1));
    const held = chains.hold();
    chains.script('ackDeposits', held.reply);
    await held.started;
    const controller = new AbortController();
    const answer = crank.runOnce(controller.signal);
    controller.abort(new Error('client went away'));
    await expect(answer).rejects.toThrow('client went away');
    held.release();
    await settle();
    expect(chains.callsOf('readState')).toHaveLength(2);
    await crank.stop(0);
  });
});

describe('crank internal errors', () => {
  it('survive as a stopped crank that /health reports, not as an uncaught exception', async () => {
    const { chains, crank, logs, metrics } = startTestCrank(NOTHING_TO_DO);
    await settle();
    chains.view = cleanupWork();
    // A chain client bug: a cleanup report without its `completed` list.
    chains.script('cleanupDeposits', async () => ({ transactions: [] }));
    await expect(crank.runOnce()).rejects.toMatchObject({ code: 'CRANK__STOPPED' });
    expect(crank.health()).toMatchObject({ enabled: false, last_error: expect.stringMatching(/^the crank stopped on an internal error: /) });
    await expect(crank.runOnce()).rejects.toMatchObject({ code: 'CRANK__STOPPED' });
    expect(logs.records()).toContainEqual(expect.objectContaining({ level: 'fatal', msg: expect.stringContaining('internal error') }));
    expect(await metricValue(metrics.crankEnabled)).toBe(0);
    await crank.stop(0);
  });
});
