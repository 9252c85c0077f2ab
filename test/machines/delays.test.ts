import { describe, expect, it } from 'vitest';
import { HISTORY_LOOKUP_CONCURRENCY, HISTORY_MAX_LOOKUPS, HISTORY_MAX_PAGES } from '../../src/chain/client/read/authority-history.js';
import { STATE_READ_ROUNDS } from '../../src/chain/client/read/read-state.js';
import { MAX_SLICE_BYTES, SLICE_CONCURRENCY } from '../../src/chain/client/read/tracker-reader.js';
import { DEPOSIT_ENTRY_SIZE, WITHDRAW_ENTRY_SIZE } from '../../src/chain/codec/layout.js';
import { withAttemptDeadline } from '../../src/machines/crank-service.js';
import { chainBounds, CYCLE_READ_ROUNDS, cycleReadMs, transactionLifeMs } from '../../src/chain/client/chain-bounds.js';
import {
  attemptDeadlineMs,
  idleWaitAfterChunk,
  isCycleDue,
  nextCycleDelay,
  RETRY_BACKOFF_CAP_MS,
  retryBackoffDelay,
  worstCaseActionMs,
  worstCaseCycleMs,
  type PollSchedule,
} from '../../src/machines/delays.js';
import { MAX_PLANNED_PER_ACTION, readLimitsFor } from '../../src/machines/planning/cycle-plan.js';
import { MAX_TIMER_DELAY_MS, sleep } from '../../src/time.js';

const LOWEST = () => 0;
const HIGHEST = () => 1 - Number.EPSILON;

describe('retryBackoffDelay', () => {
  it('doubles from the base per failed attempt, with equal jitter in [d/2, d]', () => {
    for (const [failed, ceiling] of [
      [1, 1000],
      [2, 2000],
      [3, 4000],
      [4, 8000],
    ] as const) {
      expect(retryBackoffDelay(failed, 1000, LOWEST)).toBe(ceiling / 2);
      expect(retryBackoffDelay(failed, 1000, HIGHEST)).toBe(ceiling - 1);
      expect(retryBackoffDelay(failed, 1000, () => 0.5)).toBe((ceiling * 3) / 4);
    }
  });

  it('stops growing at the cap', () => {
    expect(retryBackoffDelay(7, 1000, HIGHEST)).toBe(RETRY_BACKOFF_CAP_MS - 1);
    expect(retryBackoffDelay(50, 1000, LOWEST)).toBe(RETRY_BACKOFF_CAP_MS / 2);
  });

  it('keeps a configured base above the cap as the cap', () => {
    expect(retryBackoffDelay(1, 120_000, LOWEST)).toBe(60_000);
    expect(retryBackoffDelay(5, 120_000, HIGHEST)).toBe(119_999);
  });

  it('never exceeds one Node timer, whatever the base and attempt count', () => {
    for (const base of [1, 1000, 2 ** 40, Number.MAX_SAFE_INTEGER]) {
      for (const failed of [1, 2, 64, 1100, 4_294_967_295]) {
        const delay = retryBackoffDelay(failed, base, HIGHEST);
        expect(Number.isSafeInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(MAX_TIMER_DELAY_MS);
      }
    }
  });

  it('retries at once with a base of 0', () => {
    expect(retryBackoffDelay(3, 0, HIGHEST)).toBe(0);
  });

  it('waits at least 1 ms with any other base (what Node waits for a 0 ms timer anyway)', () => {
    expect(retryBackoffDelay(1, 1, LOWEST)).toBe(1);
    expect(retryBackoffDelay(1, 1, HIGHEST)).toBe(1);
    expect(retryBackoffDelay(2, 1, LOWEST)).toBe(1);
  });

  it('uses Math.random by default and stays within the bounds', () => {
    for (let n = 0; n < 100; n++) {
      const delay = retryBackoffDelay(2, 1000);
      expect(delay).toBeGreaterThanOrEqual(1000);
      expect(delay).toBeLessThanOrEqual(2000);
    }
  });
});

const schedule = (pollIntervalMs: number, idleWaitedMs = 0, drainBacklog = false): PollSchedule => ({
  pollIntervalMs,
  idleWaitedMs,
  drainBacklog,
});

describe('poll schedule', () => {
  it('waits the whole interval in one timer when it fits', () => {
    expect(nextCycleDelay(schedule(15_000))).toBe(15_000);
    expect(isCycleDue(schedule(15_000))).toBe(true);
    expect(nextCycleDelay(schedule(MAX_TIMER_DELAY_MS))).toBe(MAX_TIMER_DELAY_MS);
    expect(isCycleDue(schedule(MAX_TIMER_DELAY_MS))).toBe(true);
  });

  it('waits an interval longer than one timer in chunks, without ever arming more than 2^31-1 ms', () => {
    const interval = 2 * MAX_TIMER_DELAY_MS + 5;
    let current = schedule(interval);
    const delays: number[] = [];
    while (!isCycleDue(current)) {
      delays.push(nextCycleDelay(current));
      current = { ...current, idleWaitedMs: idleWaitAfterChunk(current) };
    }
    delays.push(nextCycleDelay(current));
    expect(delays).toEqual([MAX_TIMER_DELAY_MS, MAX_TIMER_DELAY_MS, 5]);
    expect(delays.reduce((a, b) => a + b, 0)).toBe(interval);
  });

  it('starts the next cycle at once while draining a backlog', () => {
    expect(nextCycleDelay(schedule(15_000, 0, true))).toBe(0);
    expect(isCycleDue(schedule(3 * MAX_TIMER_DELAY_MS, 0, true))).toBe(true);
  });

  it('treats a zero interval as back-to-back cycles', () => {
    expect(nextCycleDelay(schedule(0))).toBe(0);
    expect(isCycleDue(schedule(0))).toBe(true);
  });
});

const DEFAULTS = { maxAttempts: 3, retryBackoffMs: 1000, rpcTimeoutMs: 10_000 };
/** One read call with its three tries: 3 × 10 s + 2 s. */
const READ = 32_000;
/** Before signing: the fee history read and at most four simulations (compute-budget.ts). */
const BUDGET = 5 * READ;

describe('cycle bound', () => {
  it("one transaction's life with the defaults: its budget reads, blockhash read, first send, the 120 s confirm cap, one last wait round", () => {
    expect(transactionLifeMs(DEFAULTS)).toBe(BUDGET + READ + 10_000 + 120_000 + (3 * READ + 10_000 + 450));
    expect(attemptDeadlineMs(chainBounds(DEFAULTS))).toBe(transactionLifeMs(DEFAULTS));
  });

  it('a known blockhash lifetime shortens the wait to it plus one height check, never past the confirm cap', () => {
    const mainnet = { ...DEFAULTS, blockhashLifetimeMs: 151 * 400 };
    expect(transactionLifeMs(mainnet)).toBe(BUDGET + READ + 10_000 + (60_400 + 2_000) + (3 * READ + 10_000 + 450));
    expect(transactionLifeMs({ ...DEFAULTS, blockhashLifetimeMs: 600_000 })).toBe(transactionLifeMs(DEFAULTS));
  });

  it('with the defaults: a nine-round read; three attempts, two backoffs and two re-reads per action; three actions', () => {
    expect(CYCLE_READ_ROUNDS).toBe(9);
    expect(cycleReadMs(DEFAULTS)).toBe(9 * READ);
    const life = transactionLifeMs(DEFAULTS);
    const chain = chainBounds(DEFAULTS);
    expect(worstCaseActionMs(DEFAULTS, chain)).toBe(3 * life + (1000 + 2000) + 2 * 9 * READ);
    expect(worstCaseCycleMs(DEFAULTS, chain)).toBe(9 * READ + 3 * worstCaseActionMs(DEFAULTS, chain));
    // About 98 minutes: the bound /health's `stalled` waits for, plus the poll interval.
    expect(Math.round(worstCaseCycleMs(DEFAULTS, chain) / 60_000)).toBe(98);
  });

  it('backoffs stop growing at the 60 s cap, and a huge attempt count stays finite', () => {
    const many = { maxAttempts: 10, retryBackoffMs: 30_000, rpcTimeoutMs: 1000 };
    const life = transactionLifeMs(many);
    // 30 s, then the 60 s cap eight times.
    expect(worstCaseActionMs(many, chainBounds(many))).toBe(10 * life + 30_000 + 8 * 60_000 + 9 * cycleReadMs(many));
    expect(Number.isFinite(worstCaseCycleMs({ maxAttempts: 4_294_967_295, retryBackoffMs: 1000 }, chainBounds({ rpcTimeoutMs: 1000 })))).toBe(true);
  });

  it('the read rounds hold for the code: each window run fits one slice, three runs fit one round, history pages then lookups', () => {
    const { entriesPerPosition } = readLimitsFor(MAX_PLANNED_PER_ACTION);
    expect(entriesPerPosition * Math.max(DEPOSIT_ENTRY_SIZE, WITHDRAW_ENTRY_SIZE)).toBeLessThanOrEqual(MAX_SLICE_BYTES);
    // Source: settled_prefix and both own positions; destination: both own positions.
    expect(3).toBeLessThanOrEqual(SLICE_CONCURRENCY);
    expect(STATE_READ_ROUNDS).toBe(2);
    expect(CYCLE_READ_ROUNDS).toBe(STATE_READ_ROUNDS + HISTORY_MAX_PAGES + Math.ceil(HISTORY_MAX_LOOKUPS / HISTORY_LOOKUP_CONCURRENCY));
  });
});

describe('withAttemptDeadline', () => {
  const submission = { step: 'ack_deposit' as const, votes: [] };

  it('cuts an attempt that outlives its deadline as a retryable failure naming the action', async () => {
    const started = Date.now();
    const attempt = withAttemptDeadline(submission, 50, new AbortController().signal, (signal) => sleep(60_000, signal));
    await expect(attempt).rejects.toMatchObject({
      code: 'CRANK__ATTEMPT_DEADLINE_EXCEEDED',
      context: { action: 'ack_deposit', deadlineMs: 50 },
      message: expect.stringMatching(/^ack_deposit attempt cut after 0 s/),
    });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("passes the caller's own abort through unchanged, and a result or failure before the deadline", async () => {
    const caller = new AbortController();
    const attempt = withAttemptDeadline(submission, 60_000, caller.signal, (signal) => sleep(60_000, signal));
    caller.abort(new Error('shutdown'));
    await expect(attempt).rejects.toThrow('shutdown');
    await expect(withAttemptDeadline(submission, 60_000, new AbortController().signal, async () => 'landed')).resolves.toBe('landed');
    await expect(withAttemptDeadline(submission, 60_000, new AbortController().signal, () => Promise.reject(new Error('refused')))).rejects.toThrow(
      'refused',
    );
  });
});
