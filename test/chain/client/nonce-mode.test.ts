import { SystemProgram, Transaction } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { NONCE_ACCOUNT_RENT_LAMPORTS, nonceAddress } from '../../../src/chain/nonce-account.js';
import { isBridgeError } from '../../../src/errors.js';
import {
  READ_LIMITS,
  SOURCE_CHAIN_ID,
  TARGET_CHAIN_ID,
  authority,
  neverLandFirst,
  proposal,
  signal,
  startBridge,
  submitFailure,
  trackerHeader,
  type BridgeFixture,
} from './bridge-fixture.js';
import { depositEntry } from '../../support/deposit-entry.js';
import { metricValue } from '../../support/metric-value.js';
import { FakeChain } from './fake-chain.js';

/**
 * Durable-nonce landing (docs/chain-client.md "Landing once: durable nonces") on the scripted
 * node, which runs nonce transactions as Agave does: valid while the account holds the value
 * they were signed against, the value moving when one lands.
 */

let fixture: BridgeFixture | undefined;

afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

async function start(options: { nonceAccounts?: number; createNonces?: boolean; maxMicroLamports?: number } = {}) {
  fixture = await startBridge({
    source: {
      header: trackerHeader('DepositTracker', { entryCount: 10, ownNext: 0 }),
      entries: Array.from({ length: 10 }, (_, i) => depositEntry(i)),
    },
    target: { header: trackerHeader('WithdrawTracker', { entryCount: 5, ownNext: 5 }), entries: [] },
    nonceAccounts: options.nonceAccounts ?? 2,
    ...(options.createNonces === undefined ? {} : { createNonces: options.createNonces }),
    priorityFee: { minMicroLamports: 0, maxMicroLamports: options.maxMicroLamports ?? 100_000 },
  });
  // A cycle reads the nonce accounts with the trackers; its submissions sign in the mode found.
  await fixture.chains.readState(signal(), READ_LIMITS);
  return fixture;
}

const lane = nonceAddress(authority.publicKey, TARGET_CHAIN_ID, 0).toBase58();
const sentTransaction = (wire: string) => Transaction.from(Buffer.from(wire, 'base64'));
const history = (price: number) => Array.from({ length: 150 }, (_, i) => ({ slot: 1_000 + i, prioritizationFee: price }));

describe('nonce mode', () => {
  it('signs against the lane nonce after AdvanceNonceAccount, without a blockhash, and the landing moves the nonce', async () => {
    const f = await start();
    expect(f.chains.lifetimeModes()).toEqual({ source: 'nonce', target: 'nonce' });
    const before = f.target.nonces.get(lane)!.value;
    const report = await f.chains.ackDeposits([proposal(5), proposal(6)], signal());
    expect(report.transactions).toEqual([{ signature: f.target.landed[0], indices: [5, 6] }]);
    const sent = sentTransaction(f.target.sends[0]!.wire);
    expect(sent.recentBlockhash).toBe(before);
    expect(sent.instructions[0]!.programId.equals(SystemProgram.programId)).toBe(true);
    expect(sent.instructions[0]!.keys[0]!.pubkey.toBase58()).toBe(lane);
    expect(f.target.blockhashRequests).toHaveLength(0);
    expect(f.target.nonces.get(lane)!.value).not.toBe(before);
    expect(f.target.tracker.header.votes[1]?.nextIndex).toBe(7n);
  });

  it("a cycle reads each chain's tracker header and nonce pool in one getMultipleAccounts, one slot: no nonce is read on its own", async () => {
    const f = await start();
    const pool = (chainId: number) => [0, 1].map((position) => nonceAddress(authority.publicKey, chainId, position).toBase58());
    const before = { source: f.source.calls.length, target: f.target.calls.length };
    await f.chains.readState(signal(), READ_LIMITS);
    const cycle = { source: f.source.calls.slice(before.source), target: f.target.calls.slice(before.target) };
    // Source: the confirmed header with the pool, the finalized header (another commitment, so another call), the deposit entries.
    expect(cycle.source.map((call) => call.method)).toEqual(['getMultipleAccounts', 'getAccountInfo', 'getAccountInfo']);
    expect(cycle.source[0]!.params).toEqual([
      [f.source.trackerAddress.toBase58(), ...pool(SOURCE_CHAIN_ID)],
      // At the chain's slot floor: the previous cycles' answers agreed on the chain's slot.
      { commitment: 'confirmed', encoding: 'base64', dataSlice: { offset: 0, length: 848 }, minContextSlot: f.source.slot },
    ]);
    // Destination: the header with the pool, the withdraw entries.
    expect(cycle.target.map((call) => call.method)).toEqual(['getMultipleAccounts', 'getAccountInfo']);
    expect(cycle.target[0]!.params[0]).toEqual([f.target.trackerAddress.toBase58(), ...pool(TARGET_CHAIN_ID)]);
    // Every other read is of the tracker itself.
    for (const chain of ['source', 'target'] as const) {
      expect(cycle[chain].slice(1).map((call) => call.params[0])).toEqual(cycle[chain].slice(1).map(() => f[chain].trackerAddress.toBase58()));
    }
    expect(f.chains.lifetimeModes()).toEqual({ source: 'nonce', target: 'nonce' });
  });

  it('a nonce that moved between two cycles, with no transaction of the key to prove who moved it: not a second signer, but unverified evidence after two reads', async () => {
    const f = await start();
    // Nodes without history: the nonces alone tell.
    for (const chain of [f.source, f.target]) {
      chain.override = (call) =>
        call.method === 'getSignaturesForAddress'
          ? { error: { code: -32011, message: 'Transaction history is not available from this node' } }
          : undefined;
    }
    f.target.nonces.get(lane)!.value = FakeChain.nonceValue();
    f.target.slot += 1;
    await f.chains.readState(signal(), READ_LIMITS);
    f.target.nonces.get(lane)!.value = FakeChain.nonceValue();
    f.target.slot += 1;
    await f.chains.readState(signal(), READ_LIMITS);
    // The first move is from the value this process first saw (its previous life's, perhaps): excused once.
    expect((await f.chains.readAuthority(signal())).target.transactions).toEqual([]);
    expect(await metricValue(f.metrics.signerEvidenceUnverified, { chain: 'target' })).toBe(0);
    expect((await f.chains.readAuthority(signal())).target.transactions).toEqual([]);
    expect(await metricValue(f.metrics.signerEvidenceUnverified, { chain: 'target' })).toBe(1);
    expect(f.logs.records()).toContainEqual(
      expect.objectContaining({ level: 'warn', moves: [expect.objectContaining({ account: lane, slot: f.target.slot })] }),
    );
  });

  it("a lane closed since the cycle's read: CHAIN__INVALID_NONCE_ACCOUNT names the account, the chain and the command", async () => {
    const f = await start();
    f.target.nonces.delete(lane);
    const err = await f.chains.ackDeposits([proposal(5)], signal()).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    const cause = isBridgeError(err, 'CHAIN__FAILED_TO_SUBMIT') ? err.cause : err;
    expect(isBridgeError(cause, 'CHAIN__INVALID_NONCE_ACCOUNT') && cause.context).toEqual({
      account: lane,
      chain: 'target',
      reason: 'does not exist',
      slot: expect.any(Number),
    });
    expect((cause as Error).message).toBe(
      `nonce account ${lane} on the destination chain does not exist: its lane is out of use from the next cycle, its actions move to the pool's other lanes, ` +
        'and the chain lands in blockhash mode when no lane is left; `npm run ops -- nonce init` creates it again',
    );
    expect(f.target.sends).toEqual([]);
    await f.chains.readState(signal(), READ_LIMITS);
    // One error line names it; the other lane carries the action.
    expect(f.logs.records().filter((line) => line.level === 'error')).toEqual([expect.objectContaining({ account: lane, reason: 'does not exist' })]);
    expect(f.chains.lifetimeModes()).toEqual({ source: 'nonce', target: 'nonce' });
    const other = nonceAddress(authority.publicKey, TARGET_CHAIN_ID, 1).toBase58();
    await f.chains.ackDeposits([proposal(5)], signal());
    expect(sentTransaction(f.target.sends.at(-1)!.wire).instructions[0]!.keys[0]!.pubkey.toBase58()).toBe(other);
    f.target.nonces.delete(other);
    await f.chains.readState(signal(), READ_LIMITS);
    await f.chains.readState(signal(), READ_LIMITS);
    expect(f.chains.lifetimeModes()).toEqual({ source: 'nonce', target: 'blockhash' });
    expect(f.logs.records().filter((line) => line.level === 'error')).toHaveLength(2);
  });

  it('packs votes behind the advance as well as the budget instructions: every transaction fits a packet', async () => {
    const f = await start();
    const votes = Array.from({ length: 25 }, (_, i) => proposal(5 + i));
    const report = await f.chains.ackDeposits(votes, signal());
    expect(report.transactions.flatMap((t) => t.indices)).toEqual(votes.map((v) => v.index));
    for (const send of f.target.sends) expect(Buffer.from(send.wire, 'base64').length).toBeLessThanOrEqual(1232);
  });

  it('missing nonce accounts: blockhash mode, said in one line that names the command and the rent', async () => {
    const f = await start({ createNonces: false });
    await f.chains.readState(signal(), READ_LIMITS);
    expect(f.chains.lifetimeModes()).toEqual({ source: 'blockhash', target: 'blockhash' });
    const lines = f.logs.records().filter((line) => String(line.msg).includes('nonce init'));
    expect(lines.map((line) => line.chain).sort()).toEqual(['source', 'target']);
    expect(lines[0]!.msg).toContain(`${NONCE_ACCOUNT_RENT_LAMPORTS} lamports of rent each`);
    const report = await f.chains.ackDeposits([proposal(5)], signal());
    expect(report.transactions).toHaveLength(1);
    expect(f.target.blockhashRequests).toHaveLength(1);
  });

  it('a surge the fee history does not show: re-signed one step higher against the same nonce value until one lands, never above the cap', async () => {
    const f = await start({ maxMicroLamports: 80_000 });
    f.target.recentFees = history(0);
    f.target.clearingPrice = 20_000;
    f.target.slotsPerNonceRead = 5;
    const before = f.target.nonces.get(lane)!.value;
    const report = await f.chains.ackDeposits([proposal(5)], signal());
    const versions = [...new Set(f.target.sends.map((send) => send.wire))].map(sentTransaction);
    expect(versions.length).toBeGreaterThan(1);
    expect(versions.every((version) => version.recentBlockhash === before)).toBe(true);
    expect(f.target.landed).toEqual(report.transactions.map((t) => t.signature));
    const prices = [...f.target.budgets.values()].map((budget) => budget.price);
    expect(prices).toHaveLength(1);
    expect(prices[0]).toBeGreaterThanOrEqual(20_000);
    expect(prices[0]).toBeLessThanOrEqual(80_000);
    expect(f.target.tracker.header.votes[1]?.nextIndex).toBe(6n);
  });

  it('a restart with a vote in flight: the new life signs against the same nonce value, so the earlier transaction can never land after it', async () => {
    const f = await start();
    // The previous life's transaction: accepted, not landed yet, its sender gone.
    neverLandFirst(f.target);
    const previousLife = f.chains.ackDeposits([proposal(5)], AbortSignal.timeout(300)).catch(() => undefined);
    await previousLife;
    const inFlight = f.target.sends[0]!;
    const chains = f.restarted();
    await chains.readState(signal(), READ_LIMITS);
    // Planned afresh: one more vote than the previous life's, so a different transaction.
    const report = await chains.ackDeposits([proposal(5), proposal(6)], signal());
    expect(report.transactions).toHaveLength(1);
    expect(sentTransaction(f.target.sends.at(-1)!.wire).recentBlockhash).toBe(sentTransaction(inFlight.wire).recentBlockhash);
    // The network delivers the earlier version at last, to a leader that takes it: the nonce has moved, it cannot land.
    f.target.onSend = () => 'none';
    await fetch(f.target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'sendTransaction',
        params: [inFlight.wire, { encoding: 'base64', skipPreflight: true }],
      }),
    });
    expect(f.target.landed).toEqual([report.transactions[0]!.signature]);
    expect(f.target.tracker.header.votes[1]?.nextIndex).toBe(7n);
  });

  it('the nonce moved by another transaction of this key: the attempt ends not landed and says so', async () => {
    const f = await start();
    f.target.clearingPrice = 1;
    f.target.recentFees = history(0);
    f.target.onSend = (send) => {
      if (send.count === 1) f.target.nonces.get(lane)!.value = FakeChain.nonceValue();
      return 'ignore';
    };
    const failure = await submitFailure(f.chains.ackDeposits([proposal(5)], signal()));
    expect(failure.context.outcome).toBe('not_landed');
    expect(failure.message).toContain(`nonce ${lane} moved from`);
    expect(f.target.landed).toEqual([]);
  });
});
