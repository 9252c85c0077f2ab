import { Connection, Keypair, NONCE_ACCOUNT_LENGTH, NonceAccount, SystemProgram } from '@solana/web3.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDevnetNode, type DevnetNode } from '../../../devnet/node.js';
import { decodeTrackerHeader } from '../../../src/chain/codec/accounts.js';
import { depositSetup, fundedKeypair, rpc, sendWire, signedWire, randomKey } from './helpers.js';

/**
 * Each commitment is its own bank (PROTOCOL.md; Agave rpc.rs get_bank_with_config), over
 * JSON-RPC: confirmed 2 and finalized 6 slots behind the head. Slots pass only with
 * transactions and advanceSlots, so every slot number below is exact.
 */

const CONFIRMED_LAG = 2;
const FINALIZED_LAG = 6;

let node: DevnetNode;
let connection: Connection;

beforeEach(async () => {
  node = await startDevnetNode({
    name: 'source',
    chainId: 1,
    slotIntervalMs: 0,
    commitmentLags: { confirmedLagSlots: CONFIRMED_LAG, finalizedLagSlots: FINALIZED_LAG },
  });
  node.advanceSlots(FINALIZED_LAG);
  connection = new Connection(node.url, 'processed');
});

afterEach(async () => {
  await node.close();
});

const result = async (method: string, params?: unknown[]) => {
  const { body } = await rpc(node.url, method, params);
  if (body.error !== undefined) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
};

describe('each commitment is its own bank', () => {
  it('getSlot, getBlockHeight and getEpochInfo answer each bank; no commitment is finalized, legacy names map as on Agave', async () => {
    const head = node.slot;
    const slots = {
      processed: await result('getSlot', [{ commitment: 'processed' }]),
      confirmed: await result('getSlot', [{ commitment: 'confirmed' }]),
      finalized: await result('getSlot', [{ commitment: 'finalized' }]),
      none: await result('getSlot'),
      recent: await result('getSlot', [{ commitment: 'recent' }]),
      singleGossip: await result('getSlot', [{ commitment: 'singleGossip' }]),
      max: await result('getSlot', [{ commitment: 'max' }]),
    };
    expect(slots).toEqual({
      processed: head,
      confirmed: head - CONFIRMED_LAG,
      finalized: head - FINALIZED_LAG,
      none: head - FINALIZED_LAG,
      recent: head,
      singleGossip: head - CONFIRMED_LAG,
      max: head - FINALIZED_LAG,
    });
    expect(await result('getBlockHeight', [{ commitment: 'confirmed' }])).toBe(head - CONFIRMED_LAG);
    expect((await result('getEpochInfo', [])).absoluteSlot).toBe(head - FINALIZED_LAG);
  });

  it('reads answer the state as of the bank slot: the data, not only the label', async () => {
    const { payer, tracker, deposit } = await depositSetup(node, connection);
    node.advanceSlots(FINALIZED_LAG);
    const entryCount = async (commitment: string) => {
      const { context, value } = await result('getAccountInfo', [tracker.toBase58(), { encoding: 'base64', commitment }]);
      return {
        slot: context.slot,
        entries: decodeTrackerHeader(Buffer.from(value.data[0], 'base64'), 'DepositTracker', tracker.toBase58()).entryCount,
      };
    };
    const before = await entryCount('processed');
    await connection.sendRawTransaction(await signedWire(connection, [deposit(5n)], [payer]));
    const landedIn = node.slot - 1;
    const now = { processed: await entryCount('processed'), confirmed: await entryCount('confirmed'), finalized: await entryCount('finalized') };
    expect(now.processed.entries).not.toBe(before.entries);
    expect(now.confirmed).toEqual({ slot: node.slot - CONFIRMED_LAG, entries: before.entries });
    expect(now.finalized).toEqual({ slot: node.slot - FINALIZED_LAG, entries: before.entries });
    node.advanceSlots(landedIn + CONFIRMED_LAG - node.slot);
    expect((await entryCount('confirmed')).entries).toBe(now.processed.entries);
    expect((await entryCount('finalized')).entries).toBe(before.entries);
    node.advanceSlots(FINALIZED_LAG);
    expect((await entryCount('finalized')).entries).toBe(now.processed.entries);
    expect((await entryCount('processed')).entries).toBe(now.processed.entries);
  });

  it('an account created at the head is absent from the older banks; balances and getMultipleAccounts follow', async () => {
    const fresh = randomKey();
    node.airdrop(fresh, 5_000_000);
    const balance = async (commitment?: string) =>
      (await result('getBalance', [fresh.toBase58(), commitment === undefined ? {} : { commitment }])).value;
    expect(await balance('processed')).toBe(5_000_000);
    expect(await balance('confirmed')).toBe(0);
    expect(await balance()).toBe(0);
    const many = await result('getMultipleAccounts', [[fresh.toBase58()], { encoding: 'base64', commitment: 'confirmed' }]);
    expect(many.value).toEqual([null]);
    node.advanceSlots(CONFIRMED_LAG);
    expect(await balance('confirmed')).toBe(5_000_000);
    expect(await balance()).toBe(0);
    node.advanceSlots(FINALIZED_LAG - CONFIRMED_LAG);
    expect(await balance()).toBe(5_000_000);
  });

  it('minContextSlot is judged against the bank of the commitment: -32016 with that bank slot as data.contextSlot', async () => {
    const head = node.slot;
    const refused = await rpc(node.url, 'getBalance', [randomKey().toBase58(), { commitment: 'finalized', minContextSlot: head - CONFIRMED_LAG }]);
    expect(refused.body.error).toEqual({
      code: -32016,
      message: 'Minimum context slot has not been reached',
      data: { contextSlot: head - FINALIZED_LAG },
    });
    const confirmed = await rpc(node.url, 'getBalance', [randomKey().toBase58(), { commitment: 'confirmed', minContextSlot: head - CONFIRMED_LAG }]);
    expect(confirmed.body.result.context.slot).toBe(head - CONFIRMED_LAG);
    const slot = await rpc(node.url, 'getSlot', [{ minContextSlot: head }]);
    expect(slot.body.error).toMatchObject({ code: -32016, data: { contextSlot: head - FINALIZED_LAG } });
  });

  it('getLatestBlockhash answers each bank blockhash; a preflight on the finalized bank does not know a processed blockhash', async () => {
    const payer = Keypair.generate();
    node.airdrop(payer.publicKey, 1_000_000_000);
    node.advanceSlots(FINALIZED_LAG);
    const processed = await result('getLatestBlockhash', [{ commitment: 'processed' }]);
    const finalized = await result('getLatestBlockhash', [{ commitment: 'finalized' }]);
    expect(finalized.context.slot).toBe(node.slot - FINALIZED_LAG);
    expect(finalized.value.lastValidBlockHeight).toBe(node.slot - FINALIZED_LAG + 150);
    expect(processed.value.lastValidBlockHeight).toBe(node.slot + 150);
    expect(finalized.value.blockhash).not.toBe(processed.value.blockhash);
    const transfer = SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: randomKey(), lamports: 1_000_000 });
    const wire = (await signedWire(connection, [transfer], [payer], processed.value.blockhash)).toString('base64');
    const onFinalized = await rpc(node.url, 'sendTransaction', [wire, { encoding: 'base64' }]);
    expect(onFinalized.body.error).toMatchObject({ code: -32002, data: { err: 'BlockhashNotFound' } });
    const onProcessed = await rpc(node.url, 'sendTransaction', [wire, { encoding: 'base64', preflightCommitment: 'processed' }]);
    expect(onProcessed.body.result).toEqual(expect.any(String));
  });

  it('simulateTransaction runs on the bank of its commitment', async () => {
    const payer = Keypair.generate();
    node.airdrop(payer.publicKey, 1_000_000_000);
    const transfer = SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: randomKey(), lamports: 1_000_000 });
    const wire = (await signedWire(connection, [transfer], [payer], (await connection.getLatestBlockhash('processed')).blockhash)).toString('base64');
    const simulate = (commitment: string) => result('simulateTransaction', [wire, { encoding: 'base64', commitment, replaceRecentBlockhash: true }]);
    const onConfirmed = await simulate('confirmed');
    expect(onConfirmed.context.slot).toBe(node.slot - CONFIRMED_LAG);
    expect(onConfirmed.value.err).toBe('AccountNotFound');
    expect((await simulate('processed')).value.err).toBeNull();
    node.advanceSlots(CONFIRMED_LAG);
    expect((await simulate('confirmed')).value.err).toBeNull();
  });

  it('a simulation on an older bank sees that bank as frozen: its own blockhash, so a nonce advanced in its slot advances again', async () => {
    // Agave's Bank::register_tick registers a bank's own blockhash at its last tick: the one the next slot's transactions see.
    const authority = fundedKeypair(node);
    const nonce = Keypair.generate();
    const lamports = await connection.getMinimumBalanceForRentExemption(NONCE_ACCOUNT_LENGTH);
    const create = SystemProgram.createNonceAccount({
      fromPubkey: authority.publicKey,
      noncePubkey: nonce.publicKey,
      authorizedPubkey: authority.publicKey,
      lamports,
    }).instructions;
    expect((await sendWire(node.url, await signedWire(connection, create, [authority, nonce]), true)).body.error).toBeUndefined();
    const advance = () => SystemProgram.nonceAdvance({ noncePubkey: nonce.publicKey, authorizedPubkey: authority.publicKey });
    const value = async () => NonceAccount.fromAccountData((await connection.getAccountInfo(nonce.publicKey))!.data).nonce;
    const advanced = await sendWire(node.url, await signedWire(connection, [advance()], [authority], await value()), true);
    expect(advanced.body.error).toBeUndefined();
    const advancedSlot = (await connection.getSignatureStatuses([advanced.body.result as string])).value[0]!.slot;
    node.advanceSlots(advancedSlot + CONFIRMED_LAG - node.slot);
    const wire = await signedWire(
      connection,
      [advance(), SystemProgram.transfer({ fromPubkey: authority.publicKey, toPubkey: randomKey(), lamports: 1_000_000 })],
      [authority],
      await value(),
    );
    const onConfirmed = await result('simulateTransaction', [wire.toString('base64'), { encoding: 'base64', commitment: 'confirmed' }]);
    expect(onConfirmed.context.slot).toBe(advancedSlot);
    expect(onConfirmed.value.err).toBeNull();
  });

  it('getSignatureStatuses answers from the processed bank, each status confirmationStatus by the bank that has it', async () => {
    const payer = Keypair.generate();
    node.airdrop(payer.publicKey, 1_000_000_000);
    node.advanceSlots(CONFIRMED_LAG);
    const transfer = SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: randomKey(), lamports: 1_000_000 });
    const signature = await connection.sendRawTransaction(await signedWire(connection, [transfer], [payer]), { preflightCommitment: 'processed' });
    const landed = node.slot - 1;
    const status = async () => {
      const { context, value } = await result('getSignatureStatuses', [[signature]]);
      expect(context.slot).toBe(node.slot);
      return value[0];
    };
    expect(await status()).toEqual({ slot: landed, confirmations: 1, err: null, status: { Ok: null }, confirmationStatus: 'processed' });
    node.advanceSlots(CONFIRMED_LAG - 1);
    expect(await status()).toMatchObject({ slot: landed, confirmations: CONFIRMED_LAG, confirmationStatus: 'confirmed' });
    node.advanceSlots(FINALIZED_LAG - CONFIRMED_LAG);
    expect(await status()).toMatchObject({ slot: landed, confirmations: null, confirmationStatus: 'finalized' });
  });

  it('history (getSignaturesForAddress, getTransaction) lists a transaction once its bank has it: finalized by default', async () => {
    const payer = Keypair.generate();
    node.airdrop(payer.publicKey, 1_000_000_000);
    node.advanceSlots(CONFIRMED_LAG);
    const transfer = SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: randomKey(), lamports: 1_000_000 });
    const signature = await connection.sendRawTransaction(await signedWire(connection, [transfer], [payer]), { preflightCommitment: 'processed' });
    const listed = async (commitment?: string) =>
      (await result('getSignaturesForAddress', [payer.publicKey.toBase58(), commitment === undefined ? {} : { commitment }])).filter(
        (entry: { signature: string }) => entry.signature === signature,
      );
    const transaction = (commitment?: string) =>
      result('getTransaction', [
        signature,
        { encoding: 'base64', maxSupportedTransactionVersion: 0, ...(commitment === undefined ? {} : { commitment }) },
      ]);
    expect(await listed('confirmed')).toEqual([]);
    expect(await transaction('confirmed')).toBeNull();
    node.advanceSlots(CONFIRMED_LAG);
    expect(await listed('confirmed')).toMatchObject([{ signature, confirmationStatus: 'confirmed' }]);
    expect(await transaction('confirmed')).not.toBeNull();
    expect(await listed()).toEqual([]);
    expect(await transaction()).toBeNull();
    node.advanceSlots(FINALIZED_LAG);
    expect(await listed()).toMatchObject([{ signature, confirmationStatus: 'finalized' }]);
    expect(await transaction()).not.toBeNull();
  });

  it('keeps the writes of at most the finalized lag of slots (the memory bound)', async () => {
    const { payer, deposit } = await depositSetup(node, connection);
    for (let i = 0; i < 12; i += 1)
      await connection.sendRawTransaction(await signedWire(connection, [deposit(BigInt(i + 1))], [payer]), { preflightCommitment: 'processed' });
    expect(node.bank.historySlotsKept).toBeGreaterThan(0);
    expect(node.bank.historySlotsKept).toBeLessThanOrEqual(FINALIZED_LAG);
  });
});

describe('without lags (the default of startDevnetNode)', () => {
  it('every commitment reads the head', async () => {
    const flat = await startDevnetNode({ name: 'target', chainId: 2, slotIntervalMs: 0 });
    try {
      flat.advanceSlots(40);
      for (const commitment of ['processed', 'confirmed', 'finalized']) {
        expect((await rpc(flat.url, 'getSlot', [{ commitment }])).body.result).toBe(flat.slot);
      }
      expect((await rpc(flat.url, 'getSlot', [])).body.result).toBe(flat.slot);
    } finally {
      await flat.close();
    }
  });
});

describe('with a slot timer', () => {
  it('the banks follow the head on their own: a status becomes confirmed, then finalized, within its lag times the slot time', async () => {
    const slotMs = 20;
    const timed = await startDevnetNode({
      name: 'target',
      chainId: 2,
      slotIntervalMs: slotMs,
      commitmentLags: { confirmedLagSlots: 2, finalizedLagSlots: 32 },
    });
    try {
      // Past the first 32 slots, where every bank is still at genesis.
      const started = Date.now();
      while (timed.bank.slotOf('finalized') === 0 && Date.now() - started < 10_000) await new Promise((resolve) => setTimeout(resolve, slotMs));
      const signature = timed.airdrop(randomKey(), 1_000_000);
      const landedAt = Date.now();
      const seen = new Map<string, number>();
      // Bounded: 32 slots of 20 ms is 640 ms; a loaded machine gets 10 s.
      while (!seen.has('finalized') && Date.now() - landedAt < 10_000) {
        const { value } = (await rpc(timed.url, 'getSignatureStatuses', [[signature]])).body.result;
        const status = value[0]?.confirmationStatus as string | undefined;
        if (status !== undefined && !seen.has(status)) seen.set(status, Date.now() - landedAt);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect([...seen.keys()].filter((status) => status !== 'processed')).toEqual(['confirmed', 'finalized']);
      expect(seen.get('confirmed')!).toBeLessThan(seen.get('finalized')!);
      expect(seen.get('finalized')!).toBeGreaterThanOrEqual(31 * slotMs);
      const slots = await Promise.all(
        ['processed', 'confirmed', 'finalized'].map(async (commitment) => (await rpc(timed.url, 'getSlot', [{ commitment }])).body.result as number),
      );
      expect(slots[0]! - slots[1]!).toBeGreaterThanOrEqual(1);
      expect(slots[0]! - slots[2]!).toBeGreaterThanOrEqual(31);
    } finally {
      await timed.close();
    }
  });
});
