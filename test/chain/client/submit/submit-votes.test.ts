import bs58 from 'bs58';
import { afterEach, describe, expect, it } from 'vitest';
import type { AckWithdrawVote } from '../../../../src/chain/port/bridge-chains.js';
import {
  authority,
  depositTracker,
  isHistorySearch,
  neverLandFirst,
  proposal,
  signal,
  startBridge,
  submitFailure,
  trackerHeader,
  withdrawTracker,
  type BridgeFixture,
} from '../bridge-fixture.js';
import { NO_HISTORY_REPLY } from '../../rpc/json-rpc-test-server.js';
import { depositEntry } from '../../../support/deposit-entry.js';
import type { TrackerState } from '../fake-chain.js';
import { retriesAction } from '../../../../src/failure-policy.js';
import { waitFor } from '../../../support/wait-for.js';
import { metricValue } from '../../../support/metric-value.js';

let fixture: BridgeFixture | undefined;

afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

function withdrawState(entryCount: number, ownNext: number): TrackerState {
  return { header: trackerHeader('WithdrawTracker', { entryCount, ownNext }), entries: [] };
}

function depositState(entryCount: number, ownNext: number): TrackerState {
  const entries = Array.from({ length: entryCount }, (_, i) => depositEntry(i));
  return { header: trackerHeader('DepositTracker', { entryCount, ownNext }), entries };
}

async function start(
  options: {
    targetEntries?: number;
    ownTargetNext?: number;
    timing?: { pollIntervalMs: number; rebroadcastIntervalMs: number; confirmTimeoutMs: number };
  } = {},
) {
  fixture = await startBridge({
    source: depositState(10, 0),
    target: withdrawState(options.targetEntries ?? 5, options.ownTargetNext ?? 5),
    ...(options.timing === undefined ? {} : { timing: options.timing }),
  });
  return fixture;
}

function ownTargetNext(f: BridgeFixture): bigint | undefined {
  return f.target.tracker.header.votes[1]?.nextIndex;
}

describe('ackDeposits', () => {
  it('lands consecutive votes in one transaction and reports it', async () => {
    const f = await start();
    const report = await f.chains.ackDeposits([proposal(5), proposal(6), proposal(7)], signal());
    expect(report.transactions).toEqual([{ signature: f.target.landed[0], indices: [5, 6, 7] }]);
    expect(ownTargetNext(f)).toBe(8n);
    expect(f.target.blockhashRequests).toHaveLength(1);
    expect(f.target.sends[0]).toMatchObject({ skipPreflight: false, count: 1 });
  });

  it('packs more votes than fit one transaction into several, in order', async () => {
    const f = await start();
    const votes = Array.from({ length: 25 }, (_, i) => proposal(5 + i));
    const report = await f.chains.ackDeposits(votes, signal());
    expect(report.transactions.length).toBeGreaterThan(1);
    expect(report.transactions.flatMap((t) => t.indices)).toEqual(votes.map((v) => v.index));
    expect(f.target.landed).toEqual(report.transactions.map((t) => t.signature));
    expect(ownTargetNext(f)).toBe(30n);
  });

  it('a lost sendTransaction response does not land the votes twice', async () => {
    const f = await start();
    f.target.onSend = (send) => (send.count === 1 ? 'drop-response' : 'none');
    const report = await f.chains.ackDeposits([proposal(5), proposal(6)], signal());
    expect(f.target.landed).toHaveLength(1);
    expect(report.transactions).toEqual([{ signature: f.target.landed[0], indices: [5, 6] }]);
    expect(f.target.blockhashRequests).toHaveLength(1);
    expect(ownTargetNext(f)).toBe(7n);
  });

  it('rebroadcasts the same bytes, without preflight, until the transaction lands', async () => {
    const f = await start();
    f.target.onSend = (send) => (send.count < 3 ? 'ignore' : 'none');
    const report = await f.chains.ackDeposits([proposal(5)], signal());
    const sends = f.target.sends.filter((send) => send.signature === report.transactions[0]?.signature);
    expect(sends.length).toBeGreaterThanOrEqual(3);
    expect(new Set(sends.map((send) => send.wire)).size).toBe(1);
    expect(sends.map((send) => send.skipPreflight)).toEqual([false, ...sends.slice(1).map(() => true)]);
    expect(await metricValue(f.metrics.transactionRebroadcasts, { chain: 'target' })).toBe(sends.length - 1);
    expect(f.target.landed).toHaveLength(1);
  });

  it('an expired, unlanded transaction ends the attempt as a retryable failure; the next attempt signs anew', async () => {
    const f = await start();
    const firstSignature = neverLandFirst(f.target);
    f.target.blocksPerHeightCall = 40;
    const failure = await submitFailure(f.chains.ackDeposits([proposal(5), proposal(6)], signal()));
    expect(failure).toMatchObject({
      code: 'CHAIN__FAILED_TO_SUBMIT',
      context: { action: 'ack_deposit', outcome: 'not_landed', landedSignatures: [] },
    });
    expect(failure.message).toMatch(
      new RegExp(
        `transaction ${firstSignature()} not landed: its blockhash expired \\(block height past \\d+\\); the destination chain's RPC accepted it (\\d+) of \\1 sends but it never landed`,
      ),
    );
    // Signed once: the expiry was decided by the block height and a final status search.
    expect(f.target.blockhashRequests).toHaveLength(1);
    const finalCheck = f.target.calls.findIndex(isHistorySearch);
    expect(finalCheck).toBeGreaterThan(-1);
    expect(await metricValue(f.metrics.transactionResigns, { chain: 'target', reason: 'expired' })).toBe(1);

    const report = await f.chains.ackDeposits([proposal(5), proposal(6)], signal());
    const [first, second] = f.target.blockhashRequests;
    expect(f.target.blockhashRequests).toHaveLength(2);
    expect(second!.blockHeight).toBeGreaterThan(first!.lastValidBlockHeight);
    expect(f.target.landed).toEqual([report.transactions[0]?.signature]);
    expect(report.transactions[0]?.signature).not.toBe(firstSignature());
    expect(ownTargetNext(f)).toBe(7n);
  });

  it('every send failing: the expiry names the failure and the endpoint', async () => {
    const f = await start();
    f.target.override = (call) => (call.method === 'sendTransaction' ? { http: 500 } : undefined);
    f.target.blocksPerHeightCall = 40;
    const failure = await submitFailure(f.chains.ackDeposits([proposal(5)], signal()));
    expect(failure).toMatchObject({ code: 'CHAIN__FAILED_TO_SUBMIT', context: { outcome: 'not_landed' } });
    expect(failure.message).toMatch(
      /not landed: its blockhash expired \(block height past \d+\); sendTransaction on the destination chain failed every time \(\d+ sends; last: HTTP 500 from http:\/\/127\.0\.0\.1:\d+\); priority fee offered 0 micro-lamports\/CU/,
    );
    expect(f.target.landed).toEqual([]);
  });

  it('after a failed send it sends the same bytes again at the next poll, not a rebroadcast interval later', async () => {
    const f = await start({ timing: { pollIntervalMs: 20, rebroadcastIntervalMs: 60_000, confirmTimeoutMs: 30_000 } });
    let failed = false;
    f.target.override = (call) => {
      if (call.method !== 'sendTransaction' || failed) return undefined;
      failed = true;
      return { http: 500 };
    };
    const started = Date.now();
    const report = await f.chains.ackDeposits([proposal(5)], signal());
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(f.target.sends.map((send) => send.signature)).toEqual([report.transactions[0]?.signature]);
    expect(f.target.blockhashRequests).toHaveLength(1);
  });

  it('a status read from a view older than the one that saw the height pass decides nothing (a lagging backend)', async () => {
    const f = await start({ timing: { pollIntervalMs: 10, rebroadcastIntervalMs: 50, confirmTimeoutMs: 1_500 } });
    const firstSignature = neverLandFirst(f.target);
    f.target.blocksPerHeightCall = 40;
    // Every status answer comes from a node 40 slots behind the one that reports the height.
    f.target.override = (call) =>
      call.method === 'getSignatureStatuses' ? { result: { context: { slot: f.target.slot - 40 }, value: [null] } } : undefined;
    const failure = await submitFailure(f.chains.ackDeposits([proposal(5)], signal()));
    expect(failure).toMatchObject({ code: 'CHAIN__FAILED_TO_SUBMIT', context: { outcome: 'unknown' } });
    expect(await metricValue(f.metrics.transactionResigns, { chain: 'target' })).toBe(0);

    // A view at or past that slot: the absence is a decision; the next attempt resolves it, then signs anew.
    f.target.override = undefined;
    const report = await f.chains.ackDeposits([proposal(5)], signal());
    expect(await metricValue(f.metrics.transactionResigns, { chain: 'target', reason: 'expired' })).toBe(1);
    expect(report.transactions[0]?.signature).not.toBe(firstSignature());
  });

  it('without history (-32011 to the search), a dropped transaction is declared expired from the status cache', async () => {
    const f = await start();
    neverLandFirst(f.target);
    f.target.blocksPerHeightCall = 40;
    f.target.override = (call) => (isHistorySearch(call) ? NO_HISTORY_REPLY : undefined);
    const failure = await submitFailure(f.chains.ackDeposits([proposal(5)], signal()));
    expect(failure).toMatchObject({ code: 'CHAIN__FAILED_TO_SUBMIT', context: { outcome: 'not_landed' } });
    expect(await metricValue(f.metrics.transactionResigns, { chain: 'target', reason: 'expired' })).toBe(1);
    // Asked once; then the chain is known to have no history and the status cache decides.
    const searches = f.target.calls.filter(isHistorySearch);
    expect(searches).toHaveLength(1);
    expect(f.chains.checksOff()).toEqual([expect.objectContaining({ check: 'second_signer', chain: 'target' })]);
  });

  it('a send that keeps failing is re-sent less and less often: from the poll interval, doubling', async () => {
    const f = await start({ timing: { pollIntervalMs: 20, rebroadcastIntervalMs: 100, confirmTimeoutMs: 1_500 } });
    f.target.override = (call) => (call.method === 'sendTransaction' ? { http: 500 } : undefined);
    const failure = await submitFailure(f.chains.ackDeposits([proposal(5)], signal()));
    expect(failure).toMatchObject({ context: { outcome: 'unknown' } });
    // 20, 40, 80, 160, 320, then every 400 ms: about 8 sends in 1.5 s, where one per 20 ms poll would be about 75.
    const sends = f.target.calls.filter((call) => call.method === 'sendTransaction').length;
    expect(sends).toBeGreaterThanOrEqual(5);
    expect(sends).toBeLessThanOrEqual(12);
  });

  it('a send answered 429 with Retry-After: 1 is re-sent no sooner than a second later', async () => {
    const f = await start({ timing: { pollIntervalMs: 20, rebroadcastIntervalMs: 60_000, confirmTimeoutMs: 10_000 } });
    const sentAt: number[] = [];
    f.target.override = (call) => {
      if (call.method !== 'sendTransaction') return undefined;
      sentAt.push(performance.now());
      return sentAt.length === 1 ? { http: 429, headers: { 'retry-after': '1' } } : undefined;
    };
    const report = await f.chains.ackDeposits([proposal(5)], signal());
    expect(f.target.landed).toEqual([report.transactions[0]?.signature]);
    expect(sentAt).toHaveLength(2);
    expect(sentAt[1]! - sentAt[0]!).toBeGreaterThanOrEqual(990);
  });

  it('an HTTP 503 on send leaves the outcome unknown: it watches the signature instead of signing again', async () => {
    const f = await start();
    let failed = false;
    f.target.override = (call) => {
      if (call.method !== 'sendTransaction' || failed) return undefined;
      failed = true;
      return { http: 503 };
    };
    const report = await f.chains.ackDeposits([proposal(5)], signal());
    expect(f.target.blockhashRequests).toHaveLength(1);
    expect(f.target.landed).toEqual([report.transactions[0]?.signature]);
  });

  it('a preflight program error is not retryable and names the error and the entry index', async () => {
    const f = await start();
    const err = await submitFailure(f.chains.ackDeposits([proposal(6), proposal(7)], signal()));
    expect(err.context).toEqual({
      chain: 'target',
      action: 'ack_deposit',
      outcome: 'refused',
      programError: 'VoteOutOfOrder',
      customCode: 6001,
      index: 6,
      landedSignatures: [],
    });
    expect(err.message).toBe(
      `ack_deposit on destination tracker ${withdrawTracker.toBase58()} failed: VoteOutOfOrder (6001), refused in simulation at index 6`,
    );
    expect(f.target.landed).toHaveLength(0);
  });

  it('lands the votes before a rejected one, then reports the rejection with their signature', async () => {
    const f = await start();
    const err = await submitFailure(f.chains.ackDeposits([proposal(5), proposal(6), proposal(8)], signal()));
    expect(err.context).toMatchObject({ programError: 'VoteOutOfOrder', index: 8, outcome: 'refused' });
    expect(err.context.landedSignatures).toEqual(f.target.landed);
    expect(f.target.landed).toHaveLength(1);
    expect(ownTargetNext(f)).toBe(7n);
    expect(err.message).toMatch(/\(1 earlier transaction\(s\) of this action landed\)$/);
  });

  it('a transaction that lands with a program error is reported with its signature', async () => {
    const f = await start();
    f.target.onSend = (send) => {
      if (send.count > 1) return 'none';
      // Between preflight and execution another vote moved this authority's position.
      f.target.tracker.header.votes[1]!.nextIndex = 9n;
      return 'ignore';
    };
    const err = await submitFailure(f.chains.ackDeposits([proposal(5)], signal()));
    const landedWithError = [...f.target.statuses].find(([, status]) => status.err !== null)?.[0];
    expect(err.context).toMatchObject({ programError: 'VoteOutOfOrder', index: 5, outcome: 'landed_with_error', signature: landedWithError });
    expect(err.message).toContain(`landed in transaction ${landedWithError}`);
  });

  it('a node that refuses the send (-32005) fails retryably and leaves nothing pending', async () => {
    const f = await start();
    f.target.override = (call) => (call.method === 'sendTransaction' ? { error: { code: -32005, message: 'Node is unhealthy' } } : undefined);
    const err = await submitFailure(f.chains.ackDeposits([proposal(5)], signal()));
    expect(retriesAction(err)).toBe(true);
    expect(err.message).toMatch(/JSON-RPC error -32005/);
    f.target.override = undefined;
    const report = await f.chains.ackDeposits([proposal(5)], signal());
    expect(report.transactions).toHaveLength(1);
    // Nothing was pending: no tracker read before the new transaction.
    expect(f.target.calls.filter((call) => call.method === 'getAccountInfo')).toHaveLength(0);
  });

  it('an abort rejects promptly; the next call resolves the sent transaction before signing anything new', async () => {
    const f = await start();
    f.target.onSend = () => 'ignore';
    const controller = new AbortController();
    const reason = new Error('shutdown');
    const pending = f.chains.ackDeposits([proposal(5), proposal(6)], controller.signal);
    await waitFor(() => f.target.sends.length > 0, { timeoutMs: 2_000, what: 'the first send', intervalMs: 5 });
    const abortedAt = Date.now();
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(Date.now() - abortedAt).toBeLessThan(500);
    const sentSignature = f.target.sends[0]!.signature;

    // The earlier transaction lands when rebroadcast; the same votes are not sent again.
    f.target.onSend = () => 'none';
    const report = await f.chains.ackDeposits([proposal(5), proposal(6)], signal());
    expect(report.transactions).toEqual([{ signature: sentSignature, indices: [5, 6] }]);
    expect(f.target.blockhashRequests).toHaveLength(1);
    expect(f.target.landed).toEqual([sentSignature]);
  });

  it('gives up after confirmTimeoutMs with a retryable error, and the next call picks the transaction up', async () => {
    const f = await start({ timing: { pollIntervalMs: 10, rebroadcastIntervalMs: 40, confirmTimeoutMs: 300 } });
    f.target.onSend = () => 'ignore';
    const err = await submitFailure(f.chains.ackDeposits([proposal(5)], signal()));
    expect(retriesAction(err)).toBe(true);
    expect(err.message).toMatch(/not confirmed within 1 s; it may still land/);
    const unresolved = err.context.signature;

    f.target.onSend = () => 'none';
    const report = await f.chains.ackDeposits([proposal(5), proposal(6)], signal());
    expect(report.transactions[0]).toEqual({ signature: unresolved, indices: [5] });
    expect(report.transactions.flatMap((t) => t.indices)).toEqual([5, 6]);
    expect(f.target.landed).toHaveLength(2);
    expect(ownTargetNext(f)).toBe(7n);
  });

  it('refuses to send when next_index moved past votes no known transaction carried', async () => {
    const f = await start();
    let firstSignature: string | undefined;
    f.target.onSend = (send) => {
      firstSignature ??= send.signature;
      return 'ignore-and-drop-response';
    };
    f.target.blocksPerHeightCall = 40;
    const sendsBefore = () => f.target.sends.filter((send) => send.signature !== firstSignature).length;
    // The first attempt is cut off with its transaction's outcome unknown (it stays pending).
    const controller = new AbortController();
    const interrupted = f.chains.ackDeposits([proposal(5), proposal(6)], controller.signal);
    await waitFor(() => f.target.sends.length > 0, { timeoutMs: 2_000, what: 'the first send', intervalMs: 5 });
    controller.abort(new Error('shutdown'));
    await expect(interrupted).rejects.toThrow('shutdown');
    f.target.tracker.header.votes[1]!.nextIndex = 7n; // another signer with this key voted 5 and 6
    const err = await submitFailure(f.chains.ackDeposits([proposal(5), proposal(6)], signal()));
    expect(retriesAction(err)).toBe(false);
    expect(err.message).toMatch(
      /past votes at indices 5, 6 that no transaction known to this server carried; another process may be signing with this authority key/,
    );
    expect(sendsBefore()).toBe(0);
    expect(f.target.blockhashRequests).toHaveLength(1);
  });

  it('after an unknown outcome, a tracker rewound below the plan fails retryably without signing', async () => {
    const f = await start();
    f.target.onSend = () => 'ignore';
    const controller = new AbortController();
    const pending = f.chains.ackDeposits([proposal(5), proposal(6)], controller.signal);
    await waitFor(() => f.target.sends.length > 0, { timeoutMs: 2_000, what: 'the first send', intervalMs: 5 });
    controller.abort(new Error('shutdown'));
    await expect(pending).rejects.toThrow('shutdown');

    // A threshold no rewound every position to 3 before the earlier transaction reached a leader.
    f.target.tracker.header.votes[1]!.nextIndex = 3n;
    f.target.onSend = () => 'none';
    const err = await submitFailure(f.chains.ackDeposits([proposal(5), proposal(6)], signal()));
    expect(retriesAction(err)).toBe(true);
    expect(err.message).toMatch(/the planned votes start at index 5 but this authority's next_index is 3/);
    expect(f.target.blockhashRequests).toHaveLength(1);
    expect(f.target.landed).toHaveLength(0);
    // The earlier transaction was resolved (it landed with VoteOutOfOrder), so nothing is left pending.
    expect(f.logs.text()).toContain('an earlier transaction of this action landed with an error');
  });

  it('rejects a vote that has no on-chain form before sending anything', async () => {
    const f = await start();
    const err = await submitFailure(f.chains.ackDeposits([proposal(5), { ...proposal(6), amount: '-1' }], signal()));
    expect(retriesAction(err)).toBe(false);
    expect(err.message).toContain('votes[1].amount is "-1"');
    expect(f.target.sends).toHaveLength(0);
  });
});

describe('the authority secret key', () => {
  it('appears in no log line, error message or error context', async () => {
    const f = await start();
    f.target.onSend = (send) => (send.count === 1 ? 'ignore-and-drop-response' : 'none');
    await f.chains.ackDeposits([proposal(5)], signal());
    const err = await submitFailure(f.chains.ackDeposits([proposal(9)], signal()));
    const secretForms = [
      bs58.encode(authority.secretKey),
      JSON.stringify(Array.from(authority.secretKey)),
      Buffer.from(authority.secretKey).toString('base64'),
    ];
    const outputs = [f.logs.text(), err.message, JSON.stringify(err.context), JSON.stringify(f.chains)];
    expect(f.logs.records().length).toBeGreaterThan(0);
    for (const output of outputs) for (const secret of secretForms) expect(output).not.toContain(secret);
  });
});

describe('ackWithdraws', () => {
  it('lands votes on the source tracker', async () => {
    fixture = await startBridge({ source: depositState(10, 3), target: withdrawState(10, 10) });
    const votes: AckWithdrawVote[] = [
      { index: 3, approve: true, result: { kind: 'Confirmed', amount: '1003' } },
      { index: 4, approve: true, result: { kind: 'Rejected', reason: 'TokenPairFrozen' } },
    ];
    const report = await fixture.chains.ackWithdraws(votes, signal());
    expect(report.transactions).toEqual([{ signature: fixture.source.landed[0], indices: [3, 4] }]);
    expect(fixture.source.tracker.header.votes[1]?.nextIndex).toBe(5n);
  });

  it('names the source tracker in failures', async () => {
    fixture = await startBridge({ source: depositState(10, 3), target: withdrawState(10, 10) });
    const err = await submitFailure(
      fixture.chains.ackWithdraws([{ index: 12, approve: true, result: { kind: 'Confirmed', amount: '1' } }], signal()),
    );
    expect(err.message).toBe(
      `ack_withdraw on source tracker ${depositTracker.toBase58()} failed: VoteOutOfOrder (6001), refused in simulation at index 12`,
    );
    expect(err.context.chain).toBe('source');
  });
});
