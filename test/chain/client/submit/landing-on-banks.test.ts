import { afterEach, describe, expect, it } from 'vitest';
import { PublicKey, Transaction } from '@solana/web3.js';
import { DEFAULT_PROGRAM_ID } from '../../../../src/chain/codec/layout.js';
import { nonceAddress } from '../../../../src/chain/nonce-account.js';
import {
  READ_LIMITS,
  TARGET_CHAIN_ID,
  authority,
  proposal,
  signal,
  startBridge,
  submitFailure,
  trackerHeader,
  type BridgeFixture,
} from '../bridge-fixture.js';
import { depositEntry } from '../../../support/deposit-entry.js';
import { startJsonRpcServer, type JsonRpcTestServer } from '../../rpc/json-rpc-test-server.js';
import { histogramValue, metricValue } from '../../../support/metric-value.js';

/**
 * Landing on a cluster's terms (docs/chain-client.md, "Landing measured", "One transaction"):
 * the confirmed bank behind the head, a landing first processed on a fork the cluster abandons,
 * and sends every node refuses. The scripted node (../fake-chain.ts) answers per bank.
 */

let fixture: BridgeFixture | undefined;

let sendPath: JsonRpcTestServer | undefined;

afterEach(async () => {
  await fixture?.close();
  await sendPath?.close();
  fixture = undefined;
  sendPath = undefined;
});

async function start(nonceAccounts = 0, confirmedLag = 0, targetSendUrls?: string[]) {
  fixture = await startBridge({
    ...(targetSendUrls === undefined ? {} : { targetSendUrls }),
    source: {
      header: trackerHeader('DepositTracker', { entryCount: 10, ownNext: 0 }),
      entries: Array.from({ length: 10 }, (_, i) => depositEntry(i)),
    },
    target: { header: trackerHeader('WithdrawTracker', { entryCount: 5, ownNext: 5 }), entries: [] },
    nonceAccounts,
  });
  fixture.target.confirmedLag = confirmedLag;
  await fixture.chains.readState(signal(), READ_LIMITS);
  return fixture;
}

const ownTargetNext = (f: BridgeFixture) => f.target.tracker.header.votes[1]?.nextIndex;
const landedLines = (f: BridgeFixture) => f.logs.records().filter((record) => record.msg === 'transaction landed');

describe('slots to land', () => {
  it('count from the head read beside the first send, not from the confirmed floor 4 slots behind it', async () => {
    const f = await start(0, 4);
    f.target.slotsPerStatusPoll = 1;
    // Reads at confirmed build the floor 4 slots behind the head.
    for (let i = 0; i < 3; i++) await f.chains.readState(signal(), READ_LIMITS);
    await f.chains.ackDeposits([proposal(5)], signal());
    const processedSlotReads = f.target.calls.filter((call) => call.method === 'getSlot' && JSON.stringify(call.params[0]).includes('processed'));
    expect(processedSlotReads).toHaveLength(1);
    // Landed one slot past the head (0 when the head read met the landing): never the 5 the floor would say.
    expect(await histogramValue(f.metrics.landingSlots, 'count', { chain: 'target' })).toBe(1);
    expect(await histogramValue(f.metrics.landingSlots, 'sum', { chain: 'target' })).toBeLessThanOrEqual(1);
  });
});

describe('a landing on a fork the cluster abandons', () => {
  it('blockhash mode: seen processed (in flight, not landed), its status vanishes, the same bytes land by rebroadcast: once, never signed again', async () => {
    const f = await start();
    f.target.forkLandings = 1;
    f.target.forkPolls = 3;
    const report = await f.chains.ackDeposits([proposal(5)], signal());
    expect(f.target.forked.size).toBe(0);
    expect(f.target.landed).toEqual(report.transactions.map((t) => t.signature));
    expect(new Set(f.target.sends.map((send) => send.signature))).toEqual(new Set([report.transactions[0]!.signature]));
    expect(f.target.blockhashRequests).toHaveLength(1);
    expect(ownTargetNext(f)).toBe(6n);
    expect(landedLines(f)).toHaveLength(1);
  });

  it('nonce mode: the fork rolls nothing forward, the nonce value stays valid and a version signed against it lands: once', async () => {
    const f = await start(2);
    const lane = nonceAddress(authority.publicKey, TARGET_CHAIN_ID, 0).toBase58();
    const before = f.target.nonces.get(lane)!.value;
    f.target.forkLandings = 1;
    f.target.forkPolls = 3;
    const report = await f.chains.ackDeposits([proposal(5)], signal());
    expect(f.target.forked.size).toBe(0);
    expect(f.target.landed).toEqual(report.transactions.map((t) => t.signature));
    const landedWire = f.target.sends.find((send) => send.signature === report.transactions[0]!.signature)!.wire;
    expect(Transaction.from(Buffer.from(landedWire, 'base64')).recentBlockhash).toBe(before);
    expect(f.target.nonces.get(lane)!.value).not.toBe(before);
    expect(ownTargetNext(f)).toBe(6n);
    expect(landedLines(f)).toHaveLength(1);
  });
});

describe('sends every node refuses (HTTP 500): a failed send, never a reason to bid higher', () => {
  it('nonce mode names the send failures, and signs no higher-priced version while no node accepted one', async () => {
    const f = await start(2);
    f.target.slotsPerNonceRead = 5;
    f.target.override = (call) => (call.method === 'sendTransaction' ? { http: 500, body: 'upstream exploded' } : undefined);
    const failure = await submitFailure(f.chains.ackDeposits([proposal(5)], signal()));
    expect(failure.context.outcome).toBe('unknown');
    expect(failure.message).toMatch(
      /not confirmed within 3 s: sendTransaction on the destination chain failed every time \(\d+ sends; last: .*HTTP 500/,
    );
    expect(new Set(f.target.calls.filter((call) => call.method === 'sendTransaction').map((call) => call.params[0])).size).toBe(1);
    expect(await metricValue(f.metrics.transactionResigns, { chain: 'target', reason: 'repriced' })).toBe(0);
  });
});

describe('every transaction through the send-only paths', () => {
  it('a nonce-mode void goes to the send-only path as its versions do, with each rebroadcast', async () => {
    sendPath = await startJsonRpcServer((call) => ({
      result: Transaction.from(Buffer.from(call.params[0] as string, 'base64')).signature?.toString('hex') ?? '',
    }));
    const f = await start(2, 0, [sendPath.url]);
    // A version no leader takes: in flight when the crank no longer wants it.
    f.target.onSend = () => 'ignore';
    await f.chains.ackDeposits([proposal(5)], AbortSignal.timeout(1_000)).catch(() => undefined);
    f.target.onSend = () => 'none';
    const voided = await f.chains.voidInFlight(signal());
    expect(voided.target.voided).toBe(1);
    // The void only advances the nonce: no instruction of the bridge program.
    const bridge = new PublicKey(DEFAULT_PROGRAM_ID);
    const isVoid = (wire: string) => Transaction.from(Buffer.from(wire, 'base64')).instructions.every((ix) => !ix.programId.equals(bridge));
    const voidWires = new Set(f.target.sends.map((send) => send.wire).filter(isVoid));
    expect(voidWires.size).toBe(1);
    const onPath = sendPath.calls.filter((call) => call.method === 'sendTransaction').map((call) => call.params[0] as string);
    expect(onPath.filter(isVoid)).toEqual(expect.arrayContaining([...voidWires]));
  });
});
