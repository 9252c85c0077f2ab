import { Keypair } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeDepositEntry, encodeTrackerHeader } from '../../../../src/chain/codec/accounts.js';
import { TRACKER_HEADER_SIZE, trackerAccountSize } from '../../../../src/chain/codec/layout.js';
import type { WithdrawEntry } from '../../../../src/chain/types.js';
import { isBridgeError } from '../../../../src/errors.js';
import {
  READ_LIMITS,
  TARGET_CHAIN_ID,
  authority,
  depositTracker,
  gaugeValue,
  startBridge,
  trackerHeader,
  withdrawTracker,
  type BridgeFixture,
} from '../bridge-fixture.js';
import { depositEntry } from '../../../support/deposit-entry.js';
import { renderSlice, votingEntry, type TrackerState } from '../fake-chain.js';
import { retriesAction } from '../../../../src/failure-policy.js';
import { metricValue } from '../../../support/metric-value.js';
import { rejection } from '../../../support/rejection.js';

let fixture: BridgeFixture | undefined;

afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

const signal = () => new AbortController().signal;

/** `entries` from index `start` on, by index, as a window holds them. */
function byIndex<E>(entries: readonly E[], start: number, end = entries.length): Map<number, E> {
  return new Map(entries.slice(start, end).map((entry, i) => [start + i, entry]));
}

/** `settled` cleaned-up entries, then `pending` finalized ones waiting for cleanup and votes. */
function sourceState(p: { settled: number; pending: number; capacity: number; ownNext?: number }): TrackerState {
  const count = p.settled + p.pending;
  const entries = Array.from({ length: count }, (_, i) =>
    depositEntry(i, { status: 'Finalized', cleanupCompleted: i < p.settled, result: { kind: 'Confirmed', amount: 1n } }),
  );
  const header = trackerHeader('DepositTracker', { entryCount: count, ownNext: p.ownNext ?? count, settledPrefix: p.settled, capacity: p.capacity });
  return { header, entries };
}

function targetState(p: { entries: number; ownNext: number; capacity?: number }): TrackerState {
  const entries = Array.from({ length: p.entries }, (_, i) => votingEntry(1_000n + BigInt(i), depositEntry(i).recipient, depositEntry(i).sourceMint));
  return { header: trackerHeader('WithdrawTracker', { entryCount: p.entries, ownNext: p.ownNext, capacity: p.capacity ?? 50_000 }), entries };
}

function entrySlices(f: BridgeFixture, chain: 'source' | 'target') {
  return f[chain].calls
    .filter((call) => call.method === 'getAccountInfo')
    .map((call) => call.params[1] as { commitment: string; dataSlice: { offset: number; length: number }; minContextSlot?: number })
    .filter((config) => config.dataSlice.offset >= TRACKER_HEADER_SIZE);
}

/** Each read of the tracker's header on `chain`: the method and the commitment. */
function headerReads(f: BridgeFixture, chain: 'source' | 'target') {
  const tracker = f[chain].trackerAddress.toBase58();
  return f[chain].calls
    .filter((call) => {
      const config = call.params[1] as { dataSlice?: { offset: number } };
      const names =
        call.method === 'getMultipleAccounts'
          ? (call.params[0] as string[])[0] === tracker
          : call.method === 'getAccountInfo' && call.params[0] === tracker;
      return names && config.dataSlice?.offset === 0;
    })
    .map((call) => ({ method: call.method, commitment: (call.params[1] as { commitment: string }).commitment }));
}

describe('readState', () => {
  it('returns headers and the windows that can still need work', async () => {
    const f = (fixture = await startBridge({
      source: sourceState({ settled: 40, pending: 10, capacity: 1_000, ownNext: 45 }),
      target: targetState({ entries: 48, ownNext: 43 }),
    }));
    const view = await f.chains.readState(signal(), READ_LIMITS);
    expect(view.authority).toBe(authority.publicKey.toBase58());
    // Source: 65 entries from settled_prefix 40, own source 45 and own destination 43, cut at entry_count 50.
    expect(view.deposits.entries).toEqual(byIndex(f.source.tracker.entries, 40, 50));
    expect(view.deposits.header).toEqual(f.source.tracker.header);
    // Destination: from own destination 43 and own source 45, cut at entry_count 48.
    expect(view.withdrawals.entries).toEqual(byIndex(f.target.tracker.entries, 43, 48));
    expect(view.withdrawals.header).toEqual(f.target.tracker.header);
    // The slots the nodes answered at: what entry slots are aged against.
    expect(view.slots).toEqual({ source: f.source.slot, target: f.target.slot });
  });

  it('reads kilobytes for 10 pending entries whatever the tracker size, and reports them as metrics', async () => {
    const bytesFor = async (settled: number, capacity: number) => {
      const f = await startBridge({
        source: sourceState({ settled, pending: 10, capacity }),
        target: targetState({ entries: settled + 10, ownNext: settled, capacity }),
      });
      try {
        await f.chains.readState(signal(), READ_LIMITS);
        return {
          source: await gaugeValue(f.metrics, 'lastCycleAccountBytes', 'source'),
          target: await gaugeValue(f.metrics, 'lastCycleAccountBytes', 'target'),
          sourceTotal: await metricValue(f.metrics.accountBytesRead, { chain: 'source' }),
        };
      } finally {
        await f.close();
      }
    };
    const large = await bytesFor(49_990, 50_000);
    const small = await bytesFor(5, 100);
    // Source: the header at finalized and at confirmed, then 10 deposit entries of 160 bytes.
    expect(large.source).toBe(2 * TRACKER_HEADER_SIZE + 10 * 160);
    // Destination: one header at confirmed, then 10 withdraw entries of 144 bytes.
    expect(large.target).toBe(TRACKER_HEADER_SIZE + 10 * 144);
    expect(large.sourceTotal).toBe(large.source);
    expect(small).toEqual(large);
  });

  it('reads the batch plus one from each position, not the 1,000 entries behind it', async () => {
    const f = (fixture = await startBridge({
      source: sourceState({ settled: 0, pending: 1_000, capacity: 2_000, ownNext: 0 }),
      target: targetState({ entries: 0, ownNext: 0 }),
    }));
    const view = await f.chains.readState(signal(), READ_LIMITS);
    expect([...view.deposits.entries.keys()]).toEqual(Array.from({ length: 65 }, (_, i) => i));
    expect(entrySlices(f, 'source').map((s) => s.dataSlice)).toEqual([{ offset: TRACKER_HEADER_SIZE, length: 65 * 160 }]);
  });

  it('reads two short runs when an unclaimed transfer holds settled_prefix 40,000 entries behind', async () => {
    const source = sourceState({ settled: 100, pending: 40_000, capacity: 50_000, ownNext: 100 });
    const f = (fixture = await startBridge({ source, target: targetState({ entries: 40_000, ownNext: 39_990, capacity: 50_000 }) }));
    const view = await f.chains.readState(signal(), READ_LIMITS);
    const read = [...view.deposits.entries.keys()];
    expect(read).toEqual([...Array.from({ length: 65 }, (_, i) => 100 + i), ...Array.from({ length: 65 }, (_, i) => 39_990 + i)]);
    expect(entrySlices(f, 'source').map((s) => s.dataSlice.length)).toEqual([65 * 160, 65 * 160]);
    expect(await gaugeValue(f.metrics, 'lastCycleAccountBytes', 'source')).toBe(2 * TRACKER_HEADER_SIZE + 130 * 160);
  });

  it('reads a large window in slices of at most 64 KiB, at the source read commitment, no older than the header', async () => {
    const f = (fixture = await startBridge({
      source: sourceState({ settled: 0, pending: 1_000, capacity: 2_000, ownNext: 0 }),
      target: targetState({ entries: 0, ownNext: 0 }),
    }));
    const view = await f.chains.readState(signal(), { entriesPerPosition: 1_000 });
    expect(view.deposits.entries.size).toBe(1_000);
    const slices = entrySlices(f, 'source');
    expect(slices.map((s) => s.dataSlice.length)).toEqual([409 * 160, 409 * 160, 182 * 160]);
    for (const slice of slices) {
      expect(slice.commitment).toBe('finalized');
      expect(slice.minContextSlot).toBe(f.source.slot);
    }
  });

  it('with finalized data behind confirmed: entries and entry_count from finalized, own positions from confirmed', async () => {
    const confirmedState = sourceState({ settled: 0, pending: 12, capacity: 100, ownNext: 3 });
    const finalizedState = sourceState({ settled: 0, pending: 9, capacity: 100, ownNext: 1 });
    const f = (fixture = await startBridge({ source: confirmedState, target: targetState({ entries: 2, ownNext: 2 }) }));
    f.source.finalized = finalizedState;
    const view = await f.chains.readState(signal(), READ_LIMITS);
    expect(view.deposits.header.entryCount).toBe(9n);
    expect(view.deposits.header.votes).toEqual(confirmedState.header.votes);
    expect(view.deposits.entries).toEqual(byIndex(finalizedState.entries, 0));
    expect(headerReads(f, 'source')).toEqual(
      expect.arrayContaining([
        { method: 'getMultipleAccounts', commitment: 'confirmed' },
        { method: 'getAccountInfo', commitment: 'finalized' },
      ]),
    );
    expect(headerReads(f, 'source')).toHaveLength(2);
  });

  it('reads the source header once when the source read commitment is confirmed', async () => {
    const f = (fixture = await startBridge({
      source: sourceState({ settled: 2, pending: 3, capacity: 100 }),
      target: targetState({ entries: 5, ownNext: 5 }),
      sourceReadCommitment: 'confirmed',
    }));
    await f.chains.readState(signal(), READ_LIMITS);
    expect(headerReads(f, 'source')).toEqual([{ method: 'getMultipleAccounts', commitment: 'confirmed' }]);
    const entryReads = f.source.calls.filter((call) => call.method === 'getAccountInfo' && call.params[0] === f.source.trackerAddress.toBase58());
    expect(entryReads.map((call) => (call.params[1] as { commitment: string }).commitment)).toEqual(['confirmed']);
  });

  it('cuts the destination window at an entry removed between the header and the entries', async () => {
    const state = targetState({ entries: 8, ownNext: 5 });
    const removed: WithdrawEntry = { ...(state.entries[6] as WithdrawEntry), status: 'Empty', yesVotes: 0 };
    state.entries[6] = removed;
    const f = (fixture = await startBridge({ source: sourceState({ settled: 5, pending: 3, capacity: 100 }), target: state }));
    const view = await f.chains.readState(signal(), READ_LIMITS);
    expect(view.withdrawals.entries).toEqual(new Map([[5, state.entries[5]]]));
    expect(view.withdrawals.header.entryCount).toBe(6n);
  });

  describe('fails with an error an operator can act on', () => {
    it('a tracker that stores another chain id names the variable and the account', async () => {
      const source = sourceState({ settled: 1, pending: 1, capacity: 10 });
      source.header.sourceChainId = 5;
      fixture = await startBridge({ source, target: targetState({ entries: 2, ownNext: 2 }) });
      const err = await rejection(fixture.chains.readState(signal(), READ_LIMITS));
      expect(isBridgeError(err, 'CHAIN__INVALID_CHAIN_ID') && err.context).toEqual({
        account: depositTracker.toBase58(),
        variable: 'BRIDGE_SOURCE_CHAIN_ID',
        expected: 11,
        actual: 5,
      });
      expect((err as Error).message).toBe(
        `DepositTracker ${depositTracker.toBase58()} stores source_chain_id 5, but BRIDGE_SOURCE_CHAIN_ID is 11; set BRIDGE_SOURCE_CHAIN_ID to the chain id the bridge was deployed with`,
      );
      expect(retriesAction(err)).toBe(false);
    });

    it('a target chain id mismatch names BRIDGE_TARGET_CHAIN_ID', async () => {
      const target = targetState({ entries: 2, ownNext: 2 });
      target.header.targetChainId = TARGET_CHAIN_ID + 1;
      fixture = await startBridge({ source: sourceState({ settled: 1, pending: 1, capacity: 10 }), target });
      const err = await rejection(fixture.chains.readState(signal(), READ_LIMITS));
      expect(isBridgeError(err, 'CHAIN__INVALID_CHAIN_ID') && err.context.variable).toBe('BRIDGE_TARGET_CHAIN_ID');
    });

    it('an authority missing from a tracker names the authority and the tracker', async () => {
      const target = targetState({ entries: 2, ownNext: 2 });
      target.header.authorities[1] = Keypair.generate().publicKey.toBase58();
      fixture = await startBridge({ source: sourceState({ settled: 1, pending: 1, capacity: 10 }), target });
      const err = await rejection(fixture.chains.readState(signal(), READ_LIMITS));
      expect(isBridgeError(err, 'CHAIN__AUTHORITY_NOT_FOUND') && err.context).toEqual({
        account: withdrawTracker.toBase58(),
        chain: 'target',
        authority: authority.publicKey.toBase58(),
      });
    });

    it('a tracker owned by another program', async () => {
      fixture = await startBridge({ source: sourceState({ settled: 1, pending: 1, capacity: 10 }), target: targetState({ entries: 2, ownNext: 2 }) });
      fixture.target.owner = Keypair.generate().publicKey;
      const err = await rejection(fixture.chains.readState(signal(), READ_LIMITS));
      expect(isBridgeError(err, 'CHAIN__INVALID_OWNER') && err.context.account).toBe(withdrawTracker.toBase58());
    });

    it('a missing tracker is CHAIN__ACCOUNT_NOT_FOUND naming the account and chain, not retryable', async () => {
      fixture = await startBridge({ source: sourceState({ settled: 1, pending: 1, capacity: 10 }), target: targetState({ entries: 2, ownNext: 2 }) });
      fixture.target.override = (call) => (call.method === 'getMultipleAccounts' ? { result: { context: { slot: 1 }, value: [null] } } : undefined);
      const err = await rejection(fixture.chains.readState(signal(), READ_LIMITS));
      expect(isBridgeError(err, 'CHAIN__ACCOUNT_NOT_FOUND') && err.context).toEqual({ account: withdrawTracker.toBase58(), chain: 'target' });
      expect((err as Error).message).toMatch(/WithdrawTracker \S+ does not exist on the destination chain \(commitment confirmed\)/);
      expect(retriesAction(err)).toBe(false);
    });

    it('an account shorter than its entries', async () => {
      fixture = await startBridge({
        source: sourceState({ settled: 0, pending: 3, capacity: 10, ownNext: 0 }),
        target: targetState({ entries: 0, ownNext: 0 }),
      });
      const f = fixture;
      f.source.override = (call) => {
        const config = call.params[1] as { dataSlice: { offset: number; length: number } };
        if (call.method !== 'getAccountInfo' || config.dataSlice.offset === 0) return undefined;
        const short = Buffer.alloc(config.dataSlice.length - 16).toString('base64');
        return {
          result: {
            context: { slot: f.source.slot },
            value: { data: [short, 'base64'], executable: false, lamports: 1, owner: f.source.owner.toBase58(), rentEpoch: 0 },
          },
        };
      };
      const err = await rejection(f.chains.readState(signal(), READ_LIMITS));
      expect(isBridgeError(err, 'CHAIN__MALFORMED_ACCOUNT') && err.context.account).toBe(depositTracker.toBase58());
      expect((err as Error).message).toMatch(/has 464 bytes, expected 480: the account is shorter than its header and entry_count entries/);
    });

    it('an RPC failure on either chain is a CHAIN__RPC_FAILED the policy retries', async () => {
      fixture = await startBridge({ source: sourceState({ settled: 1, pending: 1, capacity: 10 }), target: targetState({ entries: 2, ownNext: 2 }) });
      fixture.source.override = (call) => (call.method === 'getAccountInfo' ? { http: 502 } : undefined);
      const err = await rejection(fixture.chains.readState(signal(), READ_LIMITS));
      expect(isBridgeError(err, 'CHAIN__RPC_FAILED') && err.context).toMatchObject({
        chain: 'source',
        method: 'getAccountInfo',
        kind: 'http',
        status: 502,
      });
      expect(retriesAction(err)).toBe(true);
    });
  });

  describe('bad account data: nothing is planned from it, the error names the account and what is wrong', () => {
    const account = depositTracker.toBase58();

    /** The source tracker's account as raw bytes: a header, then `entries` deposit entries, then zeros up to `length`. */
    function rawTracker(header: ReturnType<typeof trackerHeader>, length: number): Uint8Array {
      const data = new Uint8Array(length);
      data.set(encodeTrackerHeader(header).subarray(0, Math.min(length, TRACKER_HEADER_SIZE)));
      for (let i = 0; i < Number(header.entryCount) && TRACKER_HEADER_SIZE + (i + 1) * 160 <= length; i++) {
        data.set(encodeDepositEntry(depositEntry(i)), TRACKER_HEADER_SIZE + i * 160);
      }
      return data;
    }

    async function readWithSourceAccount(data: Uint8Array): Promise<unknown> {
      fixture = await startBridge({
        source: sourceState({ settled: 0, pending: 3, capacity: 256 }),
        target: targetState({ entries: 3, ownNext: 3 }),
      });
      fixture.source.rawAccount = data;
      return rejection(fixture.chains.readState(signal(), READ_LIMITS));
    }

    function expectMalformed(err: unknown, field: string, reason: RegExp): void {
      expect(isBridgeError(err, 'CHAIN__MALFORMED_ACCOUNT') && err.context).toMatchObject({ account, field });
      expect((err as Error).message).toContain(`account ${account}: field ${field}`);
      expect((err as Error).message).toMatch(reason);
      expect(retriesAction(err)).toBe(false);
      // Nothing past the header was read: no window was sized from the bad header.
      expect(entrySlices(fixture!, 'source')).toEqual([]);
    }

    it('a forged header entry_count = capacity = 2^52 in an ordinary 256-entry account', async () => {
      const forged = { ...trackerHeader('DepositTracker', { entryCount: 3, ownNext: 0, capacity: 256 }), entryCount: 2n ** 52n, capacity: 2n ** 52n };
      const err = await readWithSourceAccount(rawTracker(forged, trackerAccountSize('DepositTracker', 256)));
      expectMalformed(err, 'capacity', /is 4503599627370496, above the 65530 entries a 10 MiB DepositTracker can hold/);
    });

    it('a header claiming more entries than its capacity', async () => {
      const header = { ...trackerHeader('DepositTracker', { entryCount: 3, ownNext: 0, capacity: 256 }), entryCount: 257n };
      const err = await readWithSourceAccount(rawTracker(header, trackerAccountSize('DepositTracker', 256)));
      expectMalformed(err, 'entry_count', /is 257, above capacity 256/);
    });

    it('a truncated account: shorter than 848 + capacity x 160', async () => {
      const header = trackerHeader('DepositTracker', { entryCount: 3, ownNext: 0, capacity: 256 });
      const err = await readWithSourceAccount(rawTracker(header, trackerAccountSize('DepositTracker', 3)));
      expectMalformed(err, 'capacity', /is 256, so the account must hold 41808 bytes \(848 \+ capacity × 160\), but the node reports 1328/);
    });

    it('an account shorter than a header', async () => {
      const header = trackerHeader('DepositTracker', { entryCount: 3, ownNext: 0, capacity: 256 });
      const err = await readWithSourceAccount(rawTracker(header, 500));
      expectMalformed(err, 'header', /has 500 bytes, expected 848/);
    });

    it('the wrong discriminator', async () => {
      const data = rawTracker(
        trackerHeader('DepositTracker', { entryCount: 3, ownNext: 0, capacity: 256 }),
        trackerAccountSize('DepositTracker', 256),
      );
      data.set(encodeTrackerHeader(trackerHeader('WithdrawTracker', { entryCount: 3, ownNext: 0 })).subarray(0, 8));
      const err = await readWithSourceAccount(data);
      expect(isBridgeError(err, 'CHAIN__INVALID_DISCRIMINATOR') && err.context).toMatchObject({
        account,
        actual: 'b85cdf0f4deba5d6',
        expected: 'f7350db49ae8e1fa',
      });
      expect(entrySlices(fixture!, 'source')).toEqual([]);
    });

    it('owned by another program', async () => {
      fixture = await startBridge({
        source: sourceState({ settled: 0, pending: 3, capacity: 256 }),
        target: targetState({ entries: 3, ownNext: 3 }),
      });
      fixture.source.owner = Keypair.generate().publicKey;
      const err = await rejection(fixture.chains.readState(signal(), READ_LIMITS));
      expect(isBridgeError(err, 'CHAIN__INVALID_OWNER') && err.context).toMatchObject({ account, actual: fixture.source.owner.toBase58() });
      expect(entrySlices(fixture, 'source')).toEqual([]);
    });

    it('a slice shorter than asked from a node that does not report the account length', async () => {
      fixture = await startBridge({
        source: sourceState({ settled: 0, pending: 3, capacity: 256, ownNext: 0 }),
        target: targetState({ entries: 0, ownNext: 0 }),
      });
      const f = fixture;
      f.source.override = (call) => {
        const config = call.params[1] as { dataSlice: { offset: number; length: number } };
        if (call.method !== 'getAccountInfo') return undefined;
        const bytes = renderSlice(f.source.tracker, config.dataSlice.offset, config.dataSlice.length);
        const data = config.dataSlice.offset === 0 ? bytes : bytes.subarray(0, 160);
        const value = {
          data: [Buffer.from(data).toString('base64'), 'base64'],
          executable: false,
          lamports: 1,
          owner: f.source.owner.toBase58(),
          rentEpoch: 0,
        };
        return { result: { context: { slot: f.source.slot }, value } };
      };
      const err = await rejection(f.chains.readState(signal(), READ_LIMITS));
      expect(isBridgeError(err, 'CHAIN__MALFORMED_ACCOUNT') && err.context).toMatchObject({ account, field: 'bytes 848..1328' });
      expect((err as Error).message).toMatch(/has 160 bytes, expected 480/);
    });

    it('reads again on the next call: repaired data gives a full view', async () => {
      const forged = { ...trackerHeader('DepositTracker', { entryCount: 3, ownNext: 0, capacity: 256 }), capacity: 2n ** 52n };
      await readWithSourceAccount(rawTracker(forged, trackerAccountSize('DepositTracker', 256)));
      fixture!.source.rawAccount = undefined;
      const view = await fixture!.chains.readState(signal(), READ_LIMITS);
      expect(view.deposits.entries.size).toBe(3);
    });
  });

  it('an abort rejects promptly with the abort reason', async () => {
    fixture = await startBridge({
      source: sourceState({ settled: 1, pending: 1, capacity: 10 }),
      target: targetState({ entries: 2, ownNext: 2 }),
      rpcTimeoutMs: 30_000,
    });
    fixture.target.override = () => ({ hang: true });
    const controller = new AbortController();
    const pending = fixture.chains.readState(controller.signal, READ_LIMITS);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const reason = new Error('stop');
    const started = Date.now();
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(500);
  });
});
