import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LeaseObservation, SigningLease } from '../../src/chain/port/bridge-chains.js';
import { metricValue } from '../support/metric-value.js';
import { bridgeView, deposits } from './support/bridge-view.js';
import type { ScriptedChains } from './support/scripted-chains.js';
import { settle, startTestCrank, useCrankClock } from './support/test-crank.js';

/**
 * The signing lease through the running crank (startCrank over an in-memory BridgeChains, fake
 * timers): a free lease is taken in the first cycle, which then submits; a holder believes a
 * loss only on the leasing step's proof, and submits nothing until it has looked; a graceful stop
 * releases the lease.
 */

const POLL_MS = 15_000;
const WORK = bridgeView({ deposits: deposits(2), withdrawals: [] });
const IDLE = bridgeView({ deposits: [], withdrawals: [] });

beforeEach(useCrankClock);
afterEach(() => {
  vi.useRealTimers();
});

class FakeLease implements SigningLease {
  readonly address = 'Lease1111111111111111111111111111111111111';
  /** What the next reads answer, in order; then `current`. */
  readonly reads: LeaseObservation[] = [];
  current: LeaseObservation = { state: 'free', lamports: 0, slot: 1 };
  readonly released: string[] = [];
  /** Whether the next check finds proof of a loss (two endpoints agreeing, or another instance's transaction). */
  proven = false;

  async read(): Promise<LeaseObservation> {
    return this.reads.shift() ?? this.current;
  }

  async check(value: string, seen: LeaseObservation) {
    if (this.proven) return { kind: 'lost' as const, seen: this.current, proof: 'two endpoints agree' };
    return { kind: 'doubt' as const, why: `one endpoint read ${seen.state}; ${value} not disproven` };
  }

  async take(seen: LeaseObservation) {
    if (seen.state !== 'free') return { taken: false as const, seen: this.current, why: 'held' };
    this.current = { state: 'held', value: 'MINE', lamports: 1_447_680, slot: 2 };
    return { taken: true as const, value: 'MINE', slot: 2, signature: 'take' };
  }

  async release(value: string) {
    this.released.push(value);
    this.current = { state: 'free', lamports: 0, slot: 3 };
    return { released: true as const, advance: 'advance', signature: 'release', slot: 3 };
  }
}

function withLease(lease: FakeLease) {
  return (chains: ScriptedChains) => {
    chains.lease = lease;
  };
}

const other = (slot: number): LeaseObservation => ({ state: 'held', value: 'OTHER', lamports: 1_447_680, slot });

describe('the crank with a signing lease', () => {
  it('takes a free lease in its first cycle and submits in that cycle; a graceful stop releases it', async () => {
    const lease = new FakeLease();
    const { chains, crank, logs } = startTestCrank(WORK, { handoffMs: 300_000, pollIntervalMs: POLL_MS, before: withLease(lease) });
    await settle();
    expect(crank.role()).toEqual({ role: 'active' });
    expect(chains.callsOf('ackDeposits')).toHaveLength(1);
    expect(crank.health().lease).toMatchObject({ status: 'held' });
    expect(logs.records().some((record) => record['msg'] === 'crank: took the signing lease')).toBe(true);
    await crank.stop(1_000);
    expect(lease.released).toEqual(['MINE']);
  });

  it('one read that shows another holder, nothing proving it, is a doubt: a warn line, and the cycle submits', async () => {
    const lease = new FakeLease();
    const { chains, crank, logs } = startTestCrank(WORK, { handoffMs: 300_000, pollIntervalMs: POLL_MS, before: withLease(lease) });
    await settle();
    lease.reads.push(other(5));
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(crank.role()).toEqual({ role: 'active' });
    expect(chains.callsOf('ackDeposits')).toHaveLength(2);
    expect(logs.records().filter((record) => record['level'] === 'warn' && String(record['msg']).includes('a doubt on an endpoint'))).toHaveLength(1);
    expect(logs.records().filter((record) => record['level'] === 'error')).toEqual([]);
    await crank.stop(0);
  });

  it('proof that another instance holds it: standby at once, an error line, nothing submitted in that cycle, and nothing released at stop', async () => {
    const lease = new FakeLease();
    const { chains, crank, logs } = startTestCrank(WORK, { handoffMs: 300_000, pollIntervalMs: POLL_MS, before: withLease(lease) });
    await settle();
    lease.current = other(5);
    lease.proven = true;
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(crank.role()?.role).toBe('standby');
    expect(chains.callsOf('ackDeposits')).toHaveLength(1);
    expect(crank.health().lease).toMatchObject({ status: 'taken' });
    expect(crank.status()).toBe('degraded');
    expect(
      logs
        .records()
        .filter((record) => record['level'] === 'error')
        .map((record) => record['msg']),
    ).toEqual([expect.stringMatching(/^crank: the signing lease this server held was taken by another instance/)]);
    await crank.stop(0);
    expect(lease.released).toEqual([]);
  });

  it('a standby waiting on a lease an idle holder holds: no take-over and no standby time while nothing waits; work starts both clocks', async () => {
    const lease = new FakeLease();
    lease.current = other(5);
    const { chains, crank, metrics } = startTestCrank(IDLE, { handoffMs: 300_000, pollIntervalMs: POLL_MS, before: withLease(lease) });
    await settle();
    await vi.advanceTimersByTimeAsync(20 * POLL_MS);
    expect(crank.role()?.role).toBe('standby');
    expect(crank.health().lease).toMatchObject({ status: 'waiting' });
    expect(await metricValue(metrics.crankStandby)).toBe(0);
    chains.view = WORK;
    await vi.advanceTimersByTimeAsync(2 * POLL_MS);
    expect(await metricValue(metrics.crankStandby)).toBe(POLL_MS / 1000);
    expect(crank.role()?.role).toBe('standby');
    await crank.stop(0);
  });
});
