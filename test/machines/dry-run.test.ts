import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { bridgeView, CONFIRMED_FULL, deposit, deposits, finalizedWithdrawal, withdrawal } from './support/bridge-view.js';
import { settle, startTestCrank, useCrankClock } from './support/test-crank.js';
import { metricValue } from '../support/metric-value.js';

/** BRIDGE_DRY_RUN: the machine reads and plans every cycle and submits nothing (docs/crank.md "Dry run"). */

/** Two deposits to acknowledge, one relayable result to relay back, one finalized deposit to clean up. */
function everyKindOfWork() {
  const source = [deposit(0, { status: 'Finalized', result: { kind: 'Rejected', reason: 'InternalError' } }), ...deposits(3).slice(1)];
  return bridgeView({
    deposits: source,
    withdrawals: [withdrawal(source[0]!, { status: 'Finalized' }), finalizedWithdrawal(source[1]!, CONFIRMED_FULL(source[1]!))],
    ownSourceNext: 1,
    ownTargetNext: 2,
  });
}

beforeEach(useCrankClock);
afterEach(() => {
  vi.useRealTimers();
});

describe('dry run', () => {
  it('plans every action, logs and counts it, and submits nothing', async () => {
    const { chains, logs, metrics, crank } = startTestCrank(everyKindOfWork(), { dryRun: true });
    const report = await crank.runOnce();

    expect(chains.callsOf('readState').length).toBeGreaterThanOrEqual(1);
    expect(chains.callsOf('ackDeposits')).toEqual([]);
    expect(chains.callsOf('ackWithdraws')).toEqual([]);
    expect(chains.callsOf('cleanupDeposits')).toEqual([]);
    expect(report).toEqual({ ack_deposit_attempted: false, ack_withdraw_attempted: false, cleanup_attempted: 0, cleanup_completed: 0 });

    const planned = logs.records().filter((record) => typeof record['msg'] === 'string' && record['msg'].includes('dry run, not submitted'));
    const byAction = Object.fromEntries(planned.map((record) => [record['action'], record]));
    expect(byAction['ack_deposit']).toMatchObject({ indices: [2], votes: [{ index: 2, approve: true }] });
    expect(byAction['ack_withdraw']).toMatchObject({ indices: [1], votes: [{ index: 1, approve: true }] });
    expect(byAction['cleanup_deposit']).toMatchObject({ indices: [0], votes: [] });

    expect(await metricValue(metrics.crankDryRun)).toBe(1);
    expect(await metricValue(metrics.crankDryRunPlanned, { action: 'ack_deposit' })).toBeGreaterThanOrEqual(1);
    expect(await metricValue(metrics.crankDryRunPlanned, { action: 'cleanup_deposit' })).toBeGreaterThanOrEqual(1);
    expect(await metricValue(metrics.crankTransactionsLanded, { action: 'ack_deposit' })).toBe(0);

    const health = crank.health();
    expect(health).toMatchObject({ enabled: true, dry_run: true, total_actions_submitted: 0, last_success_at: null, last_error: null });
    expect(health.last_action).toBe('dry run: cleanup_deposit 1 entry planned, not submitted');
    await crank.stop(0);
  });

  it('does not drain a backlog back to back: the next dry-run cycle waits one poll interval', async () => {
    const { chains, crank } = startTestCrank(bridgeView({ deposits: deposits(70), withdrawals: [] }), { dryRun: true, pollIntervalMs: 15_000 });
    await settle();
    await vi.advanceTimersByTimeAsync(14_000);
    expect(chains.callsOf('readState')).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(chains.callsOf('readState')).toHaveLength(2);
    await crank.stop(0);
  });

  it('reports no dry_run field and a 0 gauge when off', async () => {
    const { metrics, crank } = startTestCrank(bridgeView({ deposits: [], withdrawals: [] }));
    await settle();
    expect(crank.health()).not.toHaveProperty('dry_run');
    expect(await metricValue(metrics.crankDryRun)).toBe(0);
    await crank.stop(0);
  });
});
