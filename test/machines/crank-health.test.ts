import { chainBounds } from '../../src/chain/client/chain-bounds.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { BridgeView } from '../../src/chain/port/bridge-chains.js';
import { publishHealthStatusAtScrape } from '../../src/machines/crank-telemetry.js';
import { worstCaseCycleMs } from '../../src/machines/delays.js';
import { FOREIGN_SIGNER_HOLD_MS } from '../../src/machines/health.js';
import { bridgeView, deposits, finalizedWithdrawal } from './support/bridge-view.js';
import { fails, retryableSubmitError, rpcError, type ScriptedChains } from './support/scripted-chains.js';
import { settle, START_SECONDS, startTestCrank, useCrankClock } from './support/test-crank.js';
import { metricSample, metricValue } from '../support/metric-value.js';

/** /health's status from a crank run as the process runs it (startCrank over scripted chains). */

const POLL_MS = 15_000;
const STALLED_AFTER_MS = POLL_MS + worstCaseCycleMs({ maxAttempts: 3, retryBackoffMs: 1000 }, chainBounds({ rpcTimeoutMs: 10_000 }));

/** ack_deposit work on the destination (2 votes: one transaction) and ack_withdraw work on the source. */
function bothChainsWork(): BridgeView {
  const source = deposits(2);
  return bridgeView({
    deposits: source,
    withdrawals: [finalizedWithdrawal(source[0]!, { kind: 'Rejected', reason: 'LimitExceeded' })],
    ownTargetNext: 1,
  });
}

const NOTHING_TO_DO = bridgeView({ deposits: [], withdrawals: [] });

beforeEach(useCrankClock);
afterEach(() => {
  vi.useRealTimers();
});

describe('fee balance', () => {
  it('skips the actions of a chain whose fees the authority cannot pay, says so, and resumes once funded', async () => {
    const { chains, crank, logs } = startTestCrank(bothChainsWork(), {
      before: (c) => {
        c.authorityView.target.balance = 4_999;
      },
    });
    await settle();
    expect(chains.callsOf('ackDeposits')).toEqual([]);
    expect(chains.callsOf('ackWithdraws')).toHaveLength(1);
    expect(crank.status()).toBe('degraded');
    expect(crank.health().last_error).toBe(
      "the authority holds 4999 lamports on the destination chain, less than the 5000 lamports this cycle's transactions there need in fees: nothing is sent there until it is funded",
    );
    expect(logs.records()).toContainEqual(expect.objectContaining({ level: 'warn', chain: 'target', balance: 4_999, need: 5_000 }));

    chains.authorityView.target.balance = 5_000;
    await crank.runOnce();
    expect(chains.callsOf('ackDeposits')).toHaveLength(1);
    expect(crank.status()).toBe('ok');
    expect(crank.health().last_error).toBeNull();
    await crank.stop(0);
  });

  it('warns below BRIDGE_MIN_BALANCE_LAMPORTS but still submits, and publishes the level', async () => {
    const { chains, crank, metrics, logs } = startTestCrank(bothChainsWork(), { minBalanceLamports: 2_000_000_000 });
    await settle();
    await crank.runOnce();
    expect(chains.callsOf('ackDeposits')).toHaveLength(2);
    // A warn line per chain when its balance falls below the level, not one per cycle.
    const lowLines = logs
      .records()
      .filter((record) => record['level'] === 'warn' && String(record['msg']).includes('below BRIDGE_MIN_BALANCE_LAMPORTS'));
    expect(lowLines).toEqual([
      expect.objectContaining({ chain: 'source', balance: 1_000_000_000, minimum: 2_000_000_000 }),
      expect.objectContaining({ chain: 'target', balance: 1_000_000_000, minimum: 2_000_000_000 }),
    ]);
    expect(crank.status()).toBe('degraded');
    expect(crank.health().last_error).toMatch(
      /^the authority holds 1000000000 lamports on the source chain, below BRIDGE_MIN_BALANCE_LAMPORTS \(2000000000\)/,
    );
    for (const chain of ['source', 'target']) expect(await metricValue(metrics.authorityMinBalance, { chain })).toBe(2_000_000_000);
    await crank.stop(0);
  });
});

describe('retrying', () => {
  it('while an action backs off after a failed attempt: degraded, and /health says which attempt failed and why; ok once it lands', async () => {
    const { chains, crank } = startTestCrank(bridgeView({ deposits: deposits(2), withdrawals: [] }), {
      before: (c) => {
        c.script('ackDeposits', fails(retryableSubmitError('ack_deposit')));
      },
    });
    await settle();
    expect(crank.status()).toBe('degraded');
    expect(crank.health().last_error).toBe(
      'retrying after a failed attempt: attempt 1 of 3 failed: ack_deposit on destination tracker T failed: transaction expired before it landed',
    );
    await vi.advanceTimersByTimeAsync(1000);
    expect(chains.callsOf('ackDeposits')).toHaveLength(2);
    expect(crank.status()).toBe('ok');
    expect(crank.health().last_error).toBeNull();
    await crank.stop(0);
  });
});

describe('from the first failed attempt', () => {
  /** A submission that fails only after `ms`, as nonce mode's attempt does after its confirmation wait. */
  const failsAfter = (ms: number) => () => new Promise<never>((_, reject) => setTimeout(() => reject(retryableSubmitError('ack_deposit')), ms));
  const ATTEMPT_MS = 120_000;

  it('degraded with the failure in last_error through the backoff and the next attempt, until one lands; the unlanded clock runs from the first read', async () => {
    const { chains, crank, metrics } = startTestCrank(bridgeView({ deposits: deposits(2), withdrawals: [] }), {
      before: (c) => {
        c.script('ackDeposits', failsAfter(ATTEMPT_MS), failsAfter(ATTEMPT_MS));
      },
    });
    await settle();
    expect(crank.status()).toBe('ok');
    expect(await metricSample(metrics.crankUnlandedSince, {})).toBe(START_SECONDS);
    await vi.advanceTimersByTimeAsync(ATTEMPT_MS);
    const failing =
      'retrying after a failed attempt: attempt 1 of 3 failed: ack_deposit on destination tracker T failed: transaction expired before it landed';
    expect(crank.status()).toBe('degraded');
    expect(crank.health().last_error).toBe(failing);
    // The backoff (1 s) is over: the second attempt runs for its 120 s, and /health still says why.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(chains.callsOf('ackDeposits')).toHaveLength(2);
    expect(crank.status()).toBe('degraded');
    expect(crank.health().last_error).toBe(failing);
    // The second attempt started within 1 s of the first failure (its backoff), so it has failed by 241 s.
    await vi.advanceTimersByTimeAsync(61_000);
    expect(crank.health().last_error).toMatch(/^retrying after a failed attempt: attempt 2 of 3 failed: /);
    expect(await metricSample(metrics.crankUnlandedSince, {})).toBe(START_SECONDS);
    await vi.advanceTimersByTimeAsync(2000);
    expect(chains.callsOf('ackDeposits')).toHaveLength(3);
    expect(crank.status()).toBe('ok');
    expect(crank.health().last_error).toBeNull();
    // Restarted at the landing (between 241 s and 243 s): the rest of the backlog waits from there.
    expect(await metricSample(metrics.crankUnlandedSince, {})).toBeGreaterThan(START_SECONDS + 240);
    await crank.stop(0);
  });

  it('no unlanded clock while nothing waits, and none of the timestamp gauges before they mean something', async () => {
    const { crank, metrics } = startTestCrank(NOTHING_TO_DO, {
      before: (c) => {
        c.script(
          'readState',
          (call) => new Promise<never>((_, reject) => call.signal.addEventListener('abort', () => reject(call.signal.reason as Error))),
        );
      },
    });
    await settle();
    // The first cycle's read hangs: nothing has finished, nothing has landed.
    for (const gauge of [metrics.crankLastCycleFinished, metrics.crankLastSuccess, metrics.crankUnlandedSince])
      expect((await gauge.get()).values).toEqual([]);
    expect(await metricSample(metrics.crankLastRun, {})).toBe(START_SECONDS);
    const stopped = crank.stop(0);
    await settle();
    await stopped;
  });
});

describe('second signer', () => {
  const FOREIGN = { signature: '5OtherProcess', slot: 90, signedHere: false };
  const OWN = { signature: '5ThisProcess', slot: 91, signedHere: true };

  it('continue: logs each foreign signature once, counts it, degrades for the hold, keeps voting', async () => {
    const { chains, crank, logs, metrics } = startTestCrank(NOTHING_TO_DO);
    await settle();
    chains.view = bothChainsWork();
    chains.authorityView.target.transactions = [OWN, FOREIGN];
    await crank.runOnce();
    expect(chains.callsOf('ackDeposits')).toHaveLength(1);
    const lines = () => logs.records().filter((record) => record['level'] === 'error' && record['signature'] !== undefined);
    expect(lines()).toEqual([expect.objectContaining({ chain: 'target', signature: '5OtherProcess', slot: 90, halted: false })]);
    expect(await metricValue(metrics.foreignSignatures, { chain: 'target' })).toBe(1);
    expect(crank.status()).toBe('degraded');
    expect(crank.health().last_error).toMatch(
      /^transaction 5OtherProcess on the destination chain \(slot 90\) was signed with this authority's key but not by this server: .*SPEC §8/,
    );

    await crank.runOnce();
    expect(lines()).toHaveLength(1);
    expect(await metricValue(metrics.foreignSignatures, { chain: 'target' })).toBe(1);
    await vi.advanceTimersByTimeAsync(FOREIGN_SIGNER_HOLD_MS);
    expect(crank.status()).toBe('degraded');
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(crank.status()).toBe('ok');
    await crank.stop(0);
  });

  it('a cycle whose tracker read fails does not read the history, so a foreign signature is reported by the next one', async () => {
    const { chains, crank, logs } = startTestCrank(NOTHING_TO_DO);
    await settle();
    const reads = chains.authorityReads;
    chains.authorityView.target.transactions = [FOREIGN];
    chains.script('readState', fails(rpcError(true)));
    await crank.runOnce();
    expect(chains.authorityReads).toBe(reads);
    await crank.runOnce();
    expect(chains.authorityReads).toBe(reads + 1);
    expect(logs.records()).toContainEqual(expect.objectContaining({ level: 'error', signature: '5OtherProcess' }));
    await crank.stop(0);
  });

  it('halt: submits nothing more, still reads and reports, and /health says why until restart', async () => {
    const { chains, crank, logs } = startTestCrank(NOTHING_TO_DO, { onForeignSigner: 'halt' });
    await settle();
    chains.view = bothChainsWork();
    chains.authorityView.source.transactions = [FOREIGN];
    const report = await crank.runOnce();
    expect(report).toEqual({ ack_deposit_attempted: false, ack_withdraw_attempted: false, cleanup_attempted: 0, cleanup_completed: 0 });
    expect(logs.records()).toContainEqual(expect.objectContaining({ level: 'error', chain: 'source', signature: '5OtherProcess', halted: true }));
    const reads = chains.callsOf('readState').length;
    await vi.advanceTimersByTimeAsync(10 * FOREIGN_SIGNER_HOLD_MS);
    expect(chains.callsOf('readState').length).toBeGreaterThan(reads + 100);
    expect(chains.callsOf('ackDeposits')).toEqual([]);
    expect(chains.callsOf('ackWithdraws')).toEqual([]);
    expect(crank.status()).toBe('degraded');
    expect(crank.health().last_error).toMatch(
      /5OtherProcess on the source chain.*submits nothing until it is restarted \(BRIDGE_ON_FOREIGN_SIGNER=halt\)$/,
    );
    await crank.stop(0);
  });
});

describe('stalled', () => {
  it('no cycle finished within poll interval + worst-case cycle: stalled, at scrape time too; a cycle that finishes ends it', async () => {
    let held!: ReturnType<ScriptedChains['hold']>;
    const { chains, crank, metrics } = startTestCrank(NOTHING_TO_DO, {
      before: (c) => {
        held = c.hold();
        c.script('readState', async () => structuredClone(NOTHING_TO_DO), held.reply);
      },
    });
    publishHealthStatusAtScrape(() => crank.status(), metrics);
    await settle();
    expect(await metricValue(metrics.crankLastCycleFinished)).toBe(START_SECONDS);
    const scraped = async (status: string) => (await metrics.registry.metrics()).includes(`bridge_health_status{status="${status}"} 1`);
    expect(await scraped('ok')).toBe(true);

    // The second cycle's read hangs (a stuck RPC call that nothing times out).
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(chains.callsOf('readState')).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(STALLED_AFTER_MS - POLL_MS);
    expect(crank.status()).toBe('ok');
    await vi.advanceTimersByTimeAsync(1);
    expect(crank.status()).toBe('stalled');
    expect(crank.health().last_error).toBe(
      `no crank cycle has finished ${Math.round((STALLED_AFTER_MS + 1) / 1000)} s ago, beyond the ${Math.round(STALLED_AFTER_MS / 1000)} s bound (poll interval + worst-case cycle): the loop is stuck; restart the server`,
    );
    expect(await scraped('stalled')).toBe(true);
    expect(await scraped('ok')).toBe(false);

    // The stuck call finally fails: the cycle finishes (failed), so the loop is no longer stalled.
    held.release(rpcError(true));
    await settle();
    expect(crank.status()).toBe('degraded');
    expect(crank.health().last_error).toMatch(/^reading the trackers failed: /);
    expect(await metricValue(metrics.crankLastCycleFinished)).toBe(START_SECONDS + (STALLED_AFTER_MS + 1) / 1000);
    expect(await scraped('degraded')).toBe(true);
    await crank.stop(0);
  });

  it('a crank stopped on an internal error is stalled at once', async () => {
    const { chains, crank } = startTestCrank(NOTHING_TO_DO);
    await settle();
    chains.view = bothChainsWork();
    // A chain client bug: a vote report without its transactions.
    chains.script('ackDeposits', async () => ({}));
    await expect(crank.runOnce()).rejects.toMatchObject({ code: 'CRANK__STOPPED' });
    expect(crank.status()).toBe('stalled');
    expect(crank.health().last_error).toMatch(/^the crank stopped on an internal error: .*; restart the server/);
    await crank.stop(0);
  });
});

describe('handoff (BRIDGE_HANDOFF_SECS)', () => {
  const OTHER = { signature: '5OtherInstance', slot: 90, signedHere: false };
  const HANDOFF_MS = 60_000;

  it('a standby reads, plans and reports ok, submits nothing, watches the other instance without counting it, and takes over once it is quiet for the window', async () => {
    const { chains, crank, logs, metrics } = startTestCrank(bothChainsWork(), { handoffMs: HANDOFF_MS });
    await settle();
    expect(crank.health()).toMatchObject({ role: 'standby', role_since: START_SECONDS, last_error: null });
    expect(crank.status()).toBe('ok');
    expect(await metricValue(metrics.crankRole, { role: 'standby' })).toBe(1);
    chains.authorityView.target.transactions = [OTHER];
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(chains.callsOf('readState')).toHaveLength(2);
    expect(await metricValue(metrics.foreignSignatures, { chain: 'target' })).toBe(0);
    expect(logs.records().filter((record) => record['level'] === 'error')).toEqual([]);
    // The window (55 s) runs from the read that saw the other instance (at 15 s): the reads at
    // 30, 45 and 60 s stand by, the one at 75 s takes over and submits its own plan.
    await vi.advanceTimersByTimeAsync(3 * POLL_MS);
    expect(chains.callsOf('readState')).toHaveLength(5);
    expect(chains.callsOf('ackDeposits')).toEqual([]);
    expect(crank.health().role).toBe('standby');
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(chains.callsOf('ackDeposits')).toHaveLength(1);
    expect(crank.health()).toMatchObject({ role: 'active', role_since: START_SECONDS + (5 * POLL_MS) / 1000 });
    expect(await metricValue(metrics.crankRole, { role: 'active' })).toBe(1);
    expect(logs.records().filter((record) => String(record['msg']).startsWith('crank: taking over'))).toHaveLength(1);
    expect(crank.status()).toBe('ok');
    await crank.stop(0);
  });

  it('a standby whose other instance keeps signing past BRIDGE_HANDOFF_SECS is degraded and says so', async () => {
    const { chains, crank, metrics, logs } = startTestCrank(NOTHING_TO_DO, { handoffMs: HANDOFF_MS });
    await settle();
    for (let read = 0; read <= HANDOFF_MS / POLL_MS + 3; read++) {
      chains.authorityView.target.transactions = [{ ...OTHER, slot: 90 + read }];
      await vi.advanceTimersByTimeAsync(POLL_MS);
    }
    // One warn line when the twin starts to stay, not one per read.
    const twinLines = logs.records().filter((record) => record['level'] === 'warn' && String(record['msg']).includes('past BRIDGE_HANDOFF_SECS'));
    expect(twinLines).toEqual([
      expect.objectContaining({
        problem: expect.stringMatching(
          /^another instance has been signing with this authority's key for 75 s, longer than BRIDGE_HANDOFF_SECS \(60 s\)/,
        ),
      }),
    ]);
    expect(crank.health().role).toBe('standby');
    expect(crank.status()).toBe('degraded');
    expect(crank.health().last_error).toMatch(
      /^another instance has been signing with this authority's key for 105 s, longer than BRIDGE_HANDOFF_SECS \(60 s\); its latest transaction is 5OtherInstance on the destination chain \(slot 97\)/,
    );
    expect(await metricValue(metrics.crankOtherSignerActive)).toBe(105);
    expect(await metricValue(metrics.crankHandoff)).toBe(60);
    expect(await metricValue(metrics.foreignSignatures, { chain: 'target' })).toBe(0);
    await crank.stop(0);
  });
});
