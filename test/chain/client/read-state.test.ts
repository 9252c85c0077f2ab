import { Keypair } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { TRACKER_HEADER_SIZE } from '../../../src/chain/codec/layout.js';
import type { WithdrawEntry } from '../../../src/chain/types.js';
import { isBridgeError } from '../../../src/errors.js';
import {
  TARGET_CHAIN_ID,
  authority,
  counterValue,
  depositEntry,
  depositTracker,
  gaugeValue,
  startBridge,
  trackerHeader,
  withdrawTracker,
  type BridgeFixture,
} from './bridge-fixture.js';
import { votingEntry, type TrackerState } from './fake-chain.js';

let fixture: BridgeFixture | undefined;

afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

const signal = () => new AbortController().signal;

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

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

function entrySlices(f: BridgeFixture, chain: 'source' | 'target') {
  return f[chain].calls
    .filter((call) => call.method === 'getAccountInfo')
    .map((call) => call.params[1] as { commitment: string; dataSlice: { offset: number; length: number }; minContextSlot?: number })
    .filter((config) => config.dataSlice.offset >= TRACKER_HEADER_SIZE);
}

describe('readState', () => {
  it('returns headers and the windows that can still need work', async () => {
    const f = (fixture = await startBridge({
      source: sourceState({ settled: 40, pending: 10, capacity: 1_000, ownNext: 45 }),
      target: targetState({ entries: 48, ownNext: 43 }),
    }));
    const view = await f.chains.readState(signal());
    expect(view.authority).toBe(authority.publicKey.toBase58());
    // Source: min(settled_prefix 40, own source 45, own destination 43) .. entry_count 50.
    expect(view.deposits.start).toBe(40);
    expect(view.deposits.entries).toEqual(f.source.tracker.entries.slice(40, 50));
    expect(view.deposits.header).toEqual(f.source.tracker.header);
    // Destination: min(own destination 43, own source 45) .. entry_count 48.
    expect(view.withdrawals.start).toBe(43);
    expect(view.withdrawals.entries).toEqual(f.target.tracker.entries.slice(43, 48));
    expect(view.withdrawals.header).toEqual(f.target.tracker.header);
  });

  it('reads kilobytes for 10 pending entries whatever the tracker size, and reports them as metrics', async () => {
    const bytesFor = async (settled: number, capacity: number) => {
      const f = await startBridge({
        source: sourceState({ settled, pending: 10, capacity }),
        target: targetState({ entries: settled + 10, ownNext: settled, capacity }),
      });
      try {
        await f.chains.readState(signal());
        return {
          source: await gaugeValue(f.metrics, 'lastCycleAccountBytes', 'source'),
          target: await gaugeValue(f.metrics, 'lastCycleAccountBytes', 'target'),
          sourceTotal: await counterValue(f.metrics, 'accountBytesRead', 'source'),
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

  it('reads a large window in slices of at most 64 KiB, at the source read commitment, no older than the header', async () => {
    const f = (fixture = await startBridge({
      source: sourceState({ settled: 0, pending: 1_000, capacity: 2_000, ownNext: 0 }),
      target: targetState({ entries: 0, ownNext: 0 }),
    }));
    const view = await f.chains.readState(signal());
    expect(view.deposits.entries).toHaveLength(1_000);
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
    const view = await f.chains.readState(signal());
    expect(view.deposits.header.entryCount).toBe(9n);
    expect(view.deposits.header.votes).toEqual(confirmedState.header.votes);
    expect(view.deposits.start).toBe(0);
    expect(view.deposits.entries).toEqual(finalizedState.entries);
    const headerReads = f.source.calls.filter((call) => call.method === 'getAccountInfo' && (call.params[1] as { dataSlice: { offset: number } }).dataSlice.offset === 0);
    expect(headerReads.map((call) => (call.params[1] as { commitment: string }).commitment).sort()).toEqual(['confirmed', 'finalized']);
  });

  it('reads the source header once when the source read commitment is confirmed', async () => {
    const f = (fixture = await startBridge({
      source: sourceState({ settled: 2, pending: 3, capacity: 100 }),
      target: targetState({ entries: 5, ownNext: 5 }),
      sourceReadCommitment: 'confirmed',
    }));
    await f.chains.readState(signal());
    const reads = f.source.calls.filter((call) => call.method === 'getAccountInfo').map((call) => call.params[1] as { commitment: string });
    expect(reads.map((r) => r.commitment)).toEqual(['confirmed', 'confirmed']);
  });

  it('cuts the destination window at an entry removed between the header and the entries', async () => {
    const state = targetState({ entries: 8, ownNext: 5 });
    const removed: WithdrawEntry = { ...(state.entries[6] as WithdrawEntry), status: 'Empty', yesVotes: 0 };
    state.entries[6] = removed;
    const f = (fixture = await startBridge({ source: sourceState({ settled: 5, pending: 3, capacity: 100 }), target: state }));
    const view = await f.chains.readState(signal());
    expect(view.withdrawals.start).toBe(5);
    expect(view.withdrawals.entries).toEqual([state.entries[5]]);
    expect(view.withdrawals.header.entryCount).toBe(6n);
  });

  describe('fails with an error an operator can act on', () => {
    it('a tracker that stores another chain id names the variable and the account', async () => {
      const source = sourceState({ settled: 1, pending: 1, capacity: 10 });
      source.header.sourceChainId = 5;
      fixture = await startBridge({ source, target: targetState({ entries: 2, ownNext: 2 }) });
      const err = await rejection(fixture.chains.readState(signal()));
      expect(isBridgeError(err, 'CHAIN__INVALID_CHAIN_ID') && err.context).toEqual({ account: depositTracker.toBase58(), variable: 'BRIDGE_SOURCE_CHAIN_ID', expected: 11, actual: 5 });
      expect((err as Error).message).toBe(`DepositTracker ${depositTracker.toBase58()} stores source_chain_id 5, but BRIDGE_SOURCE_CHAIN_ID is 11; set BRIDGE_SOURCE_CHAIN_ID to the chain id the bridge was deployed with`);
      expect((err as { retryable: boolean }).retryable).toBe(false);
    });

    it('a target chain id mismatch names BRIDGE_TARGET_CHAIN_ID', async () => {
      const target = targetState({ entries: 2, ownNext: 2 });
      target.header.targetChainId = TARGET_CHAIN_ID + 1;
      fixture = await startBridge({ source: sourceState({ settled: 1, pending: 1, capacity: 10 }), target });
      const err = await rejection(fixture.chains.readState(signal()));
      expect(isBridgeError(err, 'CHAIN__INVALID_CHAIN_ID') && err.context.variable).toBe('BRIDGE_TARGET_CHAIN_ID');
    });

    it('an authority missing from a tracker names the authority and the tracker', async () => {
      const target = targetState({ entries: 2, ownNext: 2 });
      target.header.authorities[1] = Keypair.generate().publicKey.toBase58();
      fixture = await startBridge({ source: sourceState({ settled: 1, pending: 1, capacity: 10 }), target });
      const err = await rejection(fixture.chains.readState(signal()));
      expect(isBridgeError(err, 'CHAIN__AUTHORITY_NOT_FOUND') && err.context).toEqual({
        account: withdrawTracker.toBase58(),
        chain: 'target',
        authority: authority.publicKey.toBase58(),
      });
    });

    it('a tracker owned by another program', async () => {
      fixture = await startBridge({ source: sourceState({ settled: 1, pending: 1, capacity: 10 }), target: targetState({ entries: 2, ownNext: 2 }) });
      fixture.target.owner = Keypair.generate().publicKey;
      const err = await rejection(fixture.chains.readState(signal()));
      expect(isBridgeError(err, 'CHAIN__INVALID_OWNER') && err.context.account).toBe(withdrawTracker.toBase58());
    });

    it('a missing tracker is CHAIN__ACCOUNT_NOT_FOUND naming the account and chain, not retryable', async () => {
      fixture = await startBridge({ source: sourceState({ settled: 1, pending: 1, capacity: 10 }), target: targetState({ entries: 2, ownNext: 2 }) });
      fixture.target.override = (call) => (call.method === 'getAccountInfo' ? { result: { context: { slot: 1 }, value: null } } : undefined);
      const err = await rejection(fixture.chains.readState(signal()));
      expect(isBridgeError(err, 'CHAIN__ACCOUNT_NOT_FOUND') && err.context).toEqual({ account: withdrawTracker.toBase58(), chain: 'target' });
      expect((err as Error).message).toMatch(/WithdrawTracker \S+ does not exist on the destination chain \(commitment confirmed\)/);
      expect((err as { retryable: boolean }).retryable).toBe(false);
    });

    it('an account shorter than its entries', async () => {
      fixture = await startBridge({ source: sourceState({ settled: 0, pending: 3, capacity: 10, ownNext: 0 }), target: targetState({ entries: 0, ownNext: 0 }) });
      const f = fixture;
      f.source.override = (call) => {
        const config = call.params[1] as { dataSlice: { offset: number; length: number } };
        if (call.method !== 'getAccountInfo' || config.dataSlice.offset === 0) return undefined;
        const short = Buffer.alloc(config.dataSlice.length - 16).toString('base64');
        return { result: { context: { slot: f.source.slot }, value: { data: [short, 'base64'], executable: false, lamports: 1, owner: f.source.owner.toBase58(), rentEpoch: 0 } } };
      };
      const err = await rejection(f.chains.readState(signal()));
      expect(isBridgeError(err, 'CHAIN__MALFORMED_ACCOUNT') && err.context.account).toBe(depositTracker.toBase58());
      expect((err as Error).message).toMatch(/has 464 bytes, expected 480: the account is shorter than its header and entry_count entries/);
    });

    it('an RPC failure on either chain is a retryable CHAIN__RPC_FAILED', async () => {
      fixture = await startBridge({ source: sourceState({ settled: 1, pending: 1, capacity: 10 }), target: targetState({ entries: 2, ownNext: 2 }) });
      fixture.source.override = (call) => (call.method === 'getAccountInfo' ? { http: 502 } : undefined);
      const err = await rejection(fixture.chains.readState(signal()));
      expect(isBridgeError(err, 'CHAIN__RPC_FAILED') && err.context).toMatchObject({ chain: 'source', method: 'getAccountInfo', retryable: true, status: 502 });
    });
  });

  it('an abort rejects promptly with the abort reason', async () => {
    fixture = await startBridge({ source: sourceState({ settled: 1, pending: 1, capacity: 10 }), target: targetState({ entries: 2, ownNext: 2 }), rpcTimeoutMs: 30_000 });
    fixture.target.override = () => ({ hang: true });
    const controller = new AbortController();
    const pending = fixture.chains.readState(controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const reason = new Error('stop');
    const started = Date.now();
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(500);
  });
});
