import { Connection, Keypair, MessageV0, SendTransactionError, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeTrackerHeader } from '../../../src/chain/codec/accounts.js';
import { ACCOUNT_DISCRIMINATORS } from '../../../src/chain/codec/layout.js';
import { startDevnetNode, type DevnetNode } from '../../../src/devnet/node.js';
import { depositSetup, randomKey, rpc, signedWire } from './helpers.js';

let node: DevnetNode;
let connection: Connection;
let setup: Awaited<ReturnType<typeof depositSetup>>;

beforeAll(async () => {
  node = await startDevnetNode({ name: 'source', chainId: 1, slotIntervalMs: 0 });
  connection = new Connection(node.url, 'confirmed');
  setup = await depositSetup(node, connection);
});

afterAll(async () => {
  await node.close();
});

describe('account reads', () => {
  it('getAccountInfo answers {context:{slot, apiVersion}, value} with base64 data, space and rentEpoch', async () => {
    const { body } = await rpc(node.url, 'getAccountInfo', [setup.tracker.toBase58(), { encoding: 'base64', commitment: 'finalized' }]);
    expect(body.result.context).toEqual({ slot: node.slot, apiVersion: expect.any(String) });
    const value = body.result.value;
    expect(value).toEqual({
      data: [expect.any(String), 'base64'],
      executable: false,
      lamports: expect.any(Number),
      owner: node.programId.toBase58(),
      rentEpoch: 18446744073709551615,
      space: 848 + 16 * 160,
    });
    expect(Buffer.from(value.data[0], 'base64').length).toBe(848 + 16 * 160);
  });

  it('web3.js getAccountInfo decodes the tracker, with and without dataSlice', async () => {
    const info = await connection.getAccountInfo(setup.tracker);
    expect(info?.owner.equals(node.programId)).toBe(true);
    expect(decodeTrackerHeader(info!.data, 'DepositTracker', 'test').capacity).toBe(16n);
    const head = await connection.getAccountInfo(setup.tracker, { dataSlice: { offset: 0, length: 8 }, commitment: 'processed' });
    expect(new Uint8Array(head!.data)).toEqual(ACCOUNT_DISCRIMINATORS.DepositTracker);
    const past = await connection.getAccountInfo(setup.tracker, { dataSlice: { offset: 100_000, length: 8 } });
    expect(past!.data.length).toBe(0);
    expect(await connection.getAccountInfo(randomKey())).toBeNull();
  });

  it('getMultipleAccounts answers null for a missing account', async () => {
    const infos = await connection.getMultipleAccountsInfo([setup.tracker, randomKey(), node.programId]);
    expect(infos[0]?.data.length).toBe(848 + 16 * 160);
    expect(infos[1]).toBeNull();
    expect(infos[2]?.executable).toBe(true);
  });

  it('rejects an encoding other than base64 with -32602 naming the parameter', async () => {
    for (const encoding of ['base58', 'jsonParsed', 'base64+zstd']) {
      const { body } = await rpc(node.url, 'getAccountInfo', [setup.tracker.toBase58(), { encoding }]);
      expect(body.error.code).toBe(-32602);
      expect(body.error.message).toContain('encoding');
    }
    const { body } = await rpc(node.url, 'getAccountInfo', ['not-a-key']);
    expect(body.error).toMatchObject({ code: -32602, message: expect.stringContaining('pubkey') });
    const many = await rpc(node.url, 'getMultipleAccounts', [Array.from({ length: 101 }, () => randomKey().toBase58())]);
    expect(many.body.error.code).toBe(-32602);
  });

  it('getBalance, getMinimumBalanceForRentExemption', async () => {
    const key = randomKey();
    node.airdrop(key, 1234);
    expect(await connection.getBalance(key)).toBe(1234);
    expect(await connection.getMinimumBalanceForRentExemption(0)).toBe(890_880);
  });
});

describe('cluster state', () => {
  it('getLatestBlockhash, getBlockHeight and getSlot agree: height = slot, lastValidBlockHeight = height + 150', async () => {
    const latest = await connection.getLatestBlockhashAndContext('finalized');
    expect(latest.value.lastValidBlockHeight).toBe(latest.context.slot + 150);
    expect(bs58.decode(latest.value.blockhash)).toHaveLength(32);
    expect(await connection.getBlockHeight()).toBe(node.slot);
    expect(await connection.getSlot()).toBe(node.slot);
  });

  it('getHealth is "ok"; getVersion has solana-core and feature-set', async () => {
    expect((await rpc(node.url, 'getHealth')).body.result).toBe('ok');
    expect(await (await fetch(`${node.url}/health`)).text()).toBe('ok');
    const version = await connection.getVersion();
    expect(version['solana-core']).toMatch(/^\d+\.\d+\.\d+$/);
    expect(typeof version['feature-set']).toBe('number');
  });

  it('reports -32016 when minContextSlot is ahead of the node', async () => {
    const { body } = await rpc(node.url, 'getSlot', [{ minContextSlot: node.slot + 10 }]);
    expect(body.error).toEqual({ code: -32016, message: 'Minimum context slot has not been reached', data: { contextSlot: node.slot } });
  });
});

describe('sendTransaction', () => {
  it('lands a transaction and reports a finalized status with confirmations null', async () => {
    const signature = await connection.sendRawTransaction(await signedWire(connection, [setup.deposit(5n)], [setup.payer]));
    const { value } = await connection.getSignatureStatuses([signature], { searchTransactionHistory: true });
    expect(value[0]).toEqual({ slot: expect.any(Number), confirmations: null, err: null, status: { Ok: null }, confirmationStatus: 'finalized' });
    expect((await connection.getSignatureStatuses([bs58.encode(Keypair.generate().secretKey)])).value).toEqual([null]);
  });

  it('accepts base58 transactions (the default encoding)', async () => {
    const wire = await signedWire(connection, [setup.deposit(6n)], [setup.payer]);
    const { body } = await rpc(node.url, 'sendTransaction', [bs58.encode(wire)]);
    expect(typeof body.result).toBe('string');
  });

  it('answers a preflight failure with -32002, the Rust error text and data {err, logs, accounts, unitsConsumed, returnData}', async () => {
    const wire = await signedWire(connection, [setup.deposit(0n)], [setup.payer]);
    const { body } = await rpc(node.url, 'sendTransaction', [wire.toString('base64'), { encoding: 'base64' }]);
    expect(body.error.code).toBe(-32002);
    expect(body.error.message).toBe('Transaction simulation failed: Error processing Instruction 0: custom program error: 0x177b');
    expect(body.error.data).toEqual({
      err: { InstructionError: [0, { Custom: 6011 }] },
      logs: expect.arrayContaining([`Program ${node.programId.toBase58()} invoke [1]`]),
      accounts: null,
      unitsConsumed: expect.any(Number),
      returnData: null,
    });
    const error = await connection.sendRawTransaction(wire).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(SendTransactionError);
    expect((error as SendTransactionError).logs).toEqual(body.error.data.logs);
  });

  it('reports BlockhashNotFound, AlreadyProcessed and InsufficientFundsForFee as preflight failures', async () => {
    const stale = await signedWire(connection, [setup.deposit(1n)], [setup.payer], randomKey().toBase58());
    const unknown = await rpc(node.url, 'sendTransaction', [stale.toString('base64'), { encoding: 'base64' }]);
    expect(unknown.body.error).toMatchObject({ code: -32002, message: 'Transaction simulation failed: Blockhash not found', data: { err: 'BlockhashNotFound' } });

    const wire = await signedWire(connection, [setup.deposit(2n)], [setup.payer]);
    await connection.sendRawTransaction(wire);
    const again = await rpc(node.url, 'sendTransaction', [wire.toString('base64'), { encoding: 'base64' }]);
    expect(again.body.error).toMatchObject({ code: -32002, data: { err: 'AlreadyProcessed' } });

    const poor = Keypair.generate();
    node.airdrop(poor.publicKey, 100);
    const broke = await signedWire(connection, [setup.deposit(3n, poor)], [poor]);
    const fee = await rpc(node.url, 'sendTransaction', [broke.toString('base64'), { encoding: 'base64' }]);
    expect(fee.body.error).toMatchObject({ code: -32002, data: { err: 'InsufficientFundsForFee' } });
  });

  it('answers a bad signature with -32003', async () => {
    const wire = await signedWire(connection, [setup.deposit(1n)], [setup.payer]);
    wire[5]! ^= 1;
    const { body } = await rpc(node.url, 'sendTransaction', [wire.toString('base64'), { encoding: 'base64' }]);
    expect(body.error).toEqual({ code: -32003, message: 'Transaction signature verification failure' });
  });

  it('with skipPreflight, a program failure lands as failed: fee charged, status err, no state change', async () => {
    const before = (await connection.getAccountInfo(setup.tracker))!.data;
    const balance = await connection.getBalance(setup.payer.publicKey);
    const wire = await signedWire(connection, [setup.deposit(0n)], [setup.payer]);
    const signature = await connection.sendRawTransaction(wire, { skipPreflight: true });
    const { value } = await connection.getSignatureStatuses([signature]);
    expect(value[0]).toMatchObject({
      err: { InstructionError: [0, { Custom: 6011 }] },
      status: { Err: { InstructionError: [0, { Custom: 6011 }] } },
      confirmationStatus: 'finalized',
    });
    expect(await connection.getBalance(setup.payer.publicKey)).toBe(balance - 5000);
    expect((await connection.getAccountInfo(setup.tracker))!.data).toEqual(before);
  });

  it('rejects malformed transactions and unknown encodings with -32602', async () => {
    expect((await rpc(node.url, 'sendTransaction', ['AAAA', { encoding: 'base64' }])).body.error.code).toBe(-32602);
    expect((await rpc(node.url, 'sendTransaction', ['%%%', { encoding: 'base64' }])).body.error.code).toBe(-32602);
    expect((await rpc(node.url, 'sendTransaction', ['AAAA', { encoding: 'hex' }])).body.error.message).toContain('encoding');
  });
});

describe('simulateTransaction', () => {
  it('answers {err, logs, accounts: null, unitsConsumed, returnData: null} and changes nothing', async () => {
    const { blockhash } = await connection.getLatestBlockhash();
    const tx = new VersionedTransaction(
      MessageV0.compile({ payerKey: setup.payer.publicKey, recentBlockhash: blockhash, instructions: [setup.deposit(0n)] }),
    );
    tx.sign([setup.payer]);
    const before = (await connection.getAccountInfo(setup.tracker))!.data;
    const { value } = await connection.simulateTransaction(tx, { sigVerify: true });
    expect(value).toEqual({
      err: { InstructionError: [0, { Custom: 6011 }] },
      logs: expect.any(Array),
      accounts: null,
      unitsConsumed: expect.any(Number),
      returnData: null,
    });
    expect((await connection.getAccountInfo(setup.tracker))!.data).toEqual(before);
    const replaced = await connection.simulateTransaction(tx, { replaceRecentBlockhash: true });
    expect(replaced.value.err).toEqual({ InstructionError: [0, { Custom: 6011 }] });
  });
});

describe('requestAirdrop and JSON-RPC framing', () => {
  it('requestAirdrop returns a signature whose status is recorded', async () => {
    const key = randomKey();
    const signature = await connection.requestAirdrop(key, 5_000_000);
    expect((await connection.getSignatureStatus(signature)).value?.err).toBeNull();
    expect(await connection.getBalance(key)).toBe(5_000_000);
  });

  it('answers unknown methods, parse errors and batches as JSON-RPC 2.0', async () => {
    expect((await rpc(node.url, 'getNothing')).body.error).toEqual({ code: -32601, message: 'Method not found' });
    const parse = await fetch(node.url, { method: 'POST', body: '{' });
    expect(await parse.json()).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
    const batch = await fetch(node.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'getSlot' },
        { jsonrpc: '2.0', id: 2, method: 'getHealth' },
      ]),
    });
    expect(await batch.json()).toEqual([
      { jsonrpc: '2.0', id: 1, result: node.slot },
      { jsonrpc: '2.0', id: 2, result: 'ok' },
    ]);
  });
});
