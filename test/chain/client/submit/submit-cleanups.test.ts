import { afterEach, describe, expect, it } from 'vitest';
import type { DepositEntry } from '../../../../src/chain/types.js';
import { neverLandFirst, signal, startBridge, submitFailure, trackerHeader, type BridgeFixture } from '../bridge-fixture.js';
import { depositEntry } from '../../../support/deposit-entry.js';
import type { TrackerState } from '../fake-chain.js';
import { retriesAction } from '../../../../src/failure-policy.js';
import { metricValue } from '../../../support/metric-value.js';

let fixture: BridgeFixture | undefined;

afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

const finalized = (index: number, overrides: Partial<DepositEntry> = {}): DepositEntry =>
  depositEntry(index, { status: 'Finalized', result: { kind: 'Rejected', reason: 'LimitExceeded' }, ...overrides });

/** Entries 0..1 cleaned, 2..7 finalized (4 already cleaned), 8..9 still Initialized. */
function sourceState(): TrackerState {
  const entries = Array.from({ length: 10 }, (_, i) => {
    if (i < 2 || i === 4) return finalized(i, { cleanupCompleted: true });
    if (i < 8) return finalized(i);
    return depositEntry(i);
  });
  return { header: trackerHeader('DepositTracker', { entryCount: 10, ownNext: 10, settledPrefix: 2 }), entries };
}

async function start(): Promise<BridgeFixture> {
  fixture = await startBridge({
    source: sourceState(),
    target: { header: trackerHeader('WithdrawTracker', { entryCount: 10, ownNext: 10 }), entries: [] },
  });
  return fixture;
}

const cleaned = (f: BridgeFixture) => f.source.tracker.entries.flatMap((entry, i) => ((entry as DepositEntry).cleanupCompleted ? [i] : []));

describe('cleanupDeposits', () => {
  it('re-reads the entries, skips those already cleaned, and cleans the rest in one transaction', async () => {
    const f = await start();
    const report = await f.chains.cleanupDeposits([7, 2, 3, 4, 5, 6, 2], signal());
    expect(report).toEqual({
      transactions: [{ signature: f.source.landed[0], indices: [2, 3, 5, 6, 7] }],
      completed: [2, 3, 5, 6, 7],
      alreadyDone: [4],
    });
    expect(cleaned(f)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // The depositor of each entry came from the fresh read: the program checks it (InvalidAccount).
    expect(f.source.calls.filter((call) => call.method === 'getAccountInfo').length).toBeGreaterThanOrEqual(2);
  });

  it('CleanupAlreadyCompleted inside a batch: that entry is already done, the rest is sent again', async () => {
    const f = await start();
    f.source.onSend = (send) => {
      // Someone else cleans entry 5 after our read, before our transaction.
      if (send.count === 1 && f.source.sends.length === 1) (f.source.tracker.entries[5] as DepositEntry).cleanupCompleted = true;
      return 'none';
    };
    const report = await f.chains.cleanupDeposits([2, 3, 5, 6], signal());
    expect(report.alreadyDone).toEqual([5]);
    expect(report.completed).toEqual([2, 3, 6]);
    expect(report.transactions).toEqual([{ signature: f.source.landed[0], indices: [2, 3, 6] }]);
    expect(cleaned(f)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('CleanupAlreadyCompleted: re-reads the rest, so everything the other payer cleaned drops out at once', async () => {
    const f = await start();
    f.source.onSend = (send) => {
      // Another authority's crank cleans 3, 5 and 6 after our read, before our transaction.
      if (send.count === 1 && f.source.sends.length === 1) {
        for (const i of [3, 5, 6]) (f.source.tracker.entries[i] as DepositEntry).cleanupCompleted = true;
      }
      return 'none';
    };
    const report = await f.chains.cleanupDeposits([2, 3, 5, 6, 7], signal());
    expect(report.alreadyDone.sort()).toEqual([3, 5, 6]);
    expect(report.completed).toEqual([2, 7]);
    // One refusal, then one transaction with what is left: no refusal per entry.
    expect(f.source.sends.filter((send) => send.count === 1)).toHaveLength(2);
    expect(report.transactions).toEqual([{ signature: f.source.landed[0], indices: [2, 7] }]);
  });

  it('other program errors fail only their entry; the others are cleaned and the failure is reported at the end', async () => {
    const f = await start();
    f.source.onSend = (send) => {
      // Entry 3's depositor no longer matches the account the transaction names.
      if (f.source.sends.length === 1 && send.count === 1)
        (f.source.tracker.entries[3] as DepositEntry).depositor = (f.source.tracker.entries[9] as DepositEntry).depositor;
      return 'none';
    };
    const err = await submitFailure(f.chains.cleanupDeposits([2, 3, 6, 8, 42], signal()));
    expect(retriesAction(err)).toBe(false);
    expect(err.context.landedSignatures).toEqual(f.source.landed);
    expect(err.message).toMatch(
      /3 entries could not be cleaned up \(index 8: EntryNotFinalized: status is Initialized; index 42: EntryNotFound: at or past entry_count; index 3: InvalidAccount \(6008\)\)/,
    );
    expect(cleaned(f)).toEqual([0, 1, 2, 4, 6]);
  });

  it('an expired first transaction ends the attempt retryably; the next attempt cleans the same entries anew', async () => {
    const f = await start();
    const first = neverLandFirst(f.source);
    f.source.blocksPerHeightCall = 40;
    const failure = await submitFailure(f.chains.cleanupDeposits([6, 7], signal()));
    expect(failure).toMatchObject({ context: { action: 'cleanup_deposit', outcome: 'not_landed', landedSignatures: [] } });
    expect(failure.message).toMatch(/not landed: its blockhash expired .*accepted it \d+ of \d+ sends but it never landed/);
    expect(await metricValue(f.metrics.transactionResigns, { chain: 'source', reason: 'expired' })).toBe(1);
    const report = await f.chains.cleanupDeposits([6, 7], signal());
    expect(report.completed).toEqual([6, 7]);
    expect(f.source.landed).toHaveLength(1);
    expect(f.source.landed[0]).not.toBe(first());
  });

  it('rejects an index that is not an entry index before reading anything', async () => {
    const f = await start();
    const err = await submitFailure(f.chains.cleanupDeposits([2, -1], signal()));
    expect(err.message).toContain('indices[1] is -1, expected an entry index');
    expect(f.source.calls).toHaveLength(0);
  });

  it('nothing to do for no indices', async () => {
    const f = await start();
    expect(await f.chains.cleanupDeposits([], signal())).toEqual({ transactions: [], completed: [], alreadyDone: [] });
    expect(f.source.calls).toHaveLength(0);
  });
});
