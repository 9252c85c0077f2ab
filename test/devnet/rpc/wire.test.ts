import { Connection, Keypair, MessageV0, PublicKey, SendTransactionError, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeTrackerHeader } from '../../../src/chain/codec/accounts.js';
import { ACCOUNT_DISCRIMINATORS, DEFAULT_PROGRAM_ID } from '../../../src/chain/codec/layout.js';
import { Bank } from '../../../devnet/bank/bank.js';
import { startDevnetNode, type DevnetNode } from '../../../devnet/node.js';
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
      rentEpoch: 2 ** 64, // u64::MAX as a JSON reader holds it
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

  it("getMultipleAccounts applies its one dataSlice to every account and cuts it as Agave's slice_data does", async () => {
    // A short account answers its bytes from the offset to its end, one that ends before the offset none; `space` stays the whole length.
    const short = randomKey();
    node.airdrop(short, 1_000_000);
    const slice = { offset: 0, length: 848 };
    const { body } = await rpc(node.url, 'getMultipleAccounts', [
      [setup.tracker.toBase58(), node.programId.toBase58(), short.toBase58()],
      { encoding: 'base64', dataSlice: slice },
    ]);
    const [tracker, program, wallet] = body.result.value as Array<{ data: [string, string]; space: number }>;
    expect(Buffer.from(tracker!.data[0], 'base64').length).toBe(848);
    expect(tracker!.space).toBe(848 + 16 * 160);
    expect(Buffer.from(program!.data[0], 'base64').length).toBe(Math.min(848, program!.space));
    expect(wallet!.data[0]).toBe('');
    const past = await rpc(node.url, 'getMultipleAccounts', [
      [setup.tracker.toBase58()],
      { encoding: 'base64', dataSlice: { offset: 3_000, length: 848 } },
    ]);
    expect(Buffer.from(past.body.result.value[0].data[0], 'base64').length).toBe(848 + 16 * 160 - 3_000);
    const beyond = await rpc(node.url, 'getMultipleAccounts', [
      [setup.tracker.toBase58()],
      { encoding: 'base64', dataSlice: { offset: 100_000, length: 8 } },
    ]);
    expect(beyond.body.result.value[0].data[0]).toBe('');
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

  it('getGenesisHash is a 32-byte base58 hash, the same at every ask, and another chain answers its own', async () => {
    const genesis = await connection.getGenesisHash();
    expect(bs58.decode(genesis)).toHaveLength(32);
    expect(await connection.getGenesisHash()).toBe(genesis);
    const other = await startDevnetNode({ name: 'target', chainId: 2, slotIntervalMs: 0 });
    try {
      expect(await new Connection(other.url).getGenesisHash()).not.toBe(genesis);
    } finally {
      await other.close();
    }
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
    expect(unknown.body.error).toMatchObject({
      code: -32002,
      message: 'Transaction simulation failed: Blockhash not found',
      data: { err: 'BlockhashNotFound' },
    });

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

async function deposits(depositor: Keypair, count: number): Promise<string[]> {
  const signatures: string[] = [];
  for (let i = 0; i < count; i += 1) {
    signatures.push(await connection.sendRawTransaction(await signedWire(connection, [setup.deposit(BigInt(i + 1), depositor)], [depositor])));
  }
  return signatures;
}

describe('getSignaturesForAddress', () => {
  it('answers newest first in the standard shape, failed transactions included, through web3.js', async () => {
    const depositor = Keypair.generate();
    const airdrop = node.airdrop(depositor.publicKey, 1_000_000_000);
    const [first, second] = await deposits(depositor, 2);
    const failed = await connection.sendRawTransaction(await signedWire(connection, [setup.deposit(0n, depositor)], [depositor]), {
      skipPreflight: true,
    });
    const { body } = await rpc(node.url, 'getSignaturesForAddress', [depositor.publicKey.toBase58()]);
    expect(body.result.map((info: { signature: string }) => info.signature)).toEqual([failed, second, first, airdrop]);
    expect(body.result[1]).toEqual({
      signature: second,
      slot: expect.any(Number),
      err: null,
      memo: null,
      blockTime: expect.any(Number),
      confirmationStatus: 'finalized',
    });
    expect(body.result[0].err).toEqual({ InstructionError: [0, { Custom: 6011 }] });
    expect(Math.abs(body.result[0].blockTime - Date.now() / 1000)).toBeLessThan(60);
    const slots = body.result.map((info: { slot: number }) => info.slot);
    expect(slots).toEqual([...slots].sort((a, b) => b - a));

    const infos = await connection.getSignaturesForAddress(depositor.publicKey, { limit: 2 }, 'finalized');
    expect(infos.map((info) => info.signature)).toEqual([failed, second]);
    // The tracker is listed by every deposit: the depositor's transactions are in its history too.
    const tracker = await connection.getSignaturesForAddress(setup.tracker, { limit: 3 });
    expect(tracker.map((info) => info.signature)).toEqual([failed, second, first]);
  });

  it('before and until are exclusive bounds; an unknown before answers [], an unknown until bounds nothing', async () => {
    const depositor = Keypair.generate();
    node.airdrop(depositor.publicKey, 1_000_000_000);
    const [a, b, c, d] = await deposits(depositor, 4);
    const signatures = async (config: Record<string, unknown>) =>
      (await connection.getSignaturesForAddress(depositor.publicKey, config)).map((info) => info.signature);
    expect(await signatures({ before: d, until: a })).toEqual([c, b]);
    expect(await signatures({ until: b })).toEqual([d, c]);
    expect(await signatures({ before: b, limit: 1 })).toEqual([a]);
    expect(await signatures({ until: d })).toEqual([]);
    const unknown = bs58.encode(Keypair.generate().secretKey);
    expect(await signatures({ before: unknown })).toEqual([]);
    expect((await signatures({ until: unknown })).slice(0, 4)).toEqual([d, c, b, a]);
    expect(await connection.getSignaturesForAddress(randomKey())).toEqual([]);
  });

  it('rejects a bad address, limit, signature or commitment with -32602', async () => {
    const address = setup.payer.publicKey.toBase58();
    const cases: Array<[unknown[], string]> = [
      [['not-a-key'], 'address'],
      [[address, { limit: 0 }], 'Invalid limit; max 1000'],
      [[address, { limit: 1001 }], 'Invalid limit; max 1000'],
      [[address, { limit: 1.5 }], 'Invalid limit'],
      [[address, { before: 'xyz' }], 'before'],
      [[address, { until: randomKey().toBase58() }], 'until'],
      [[address, { commitment: 'processed' }], 'Method does not support commitment below `confirmed`'],
      [[address, { commitment: 'weird' }], 'commitment'],
      [[address, 'config'], 'config'],
    ];
    for (const [params, message] of cases) {
      const { body } = await rpc(node.url, 'getSignaturesForAddress', params);
      expect(body.error, JSON.stringify(params)).toMatchObject({ code: -32602, message: expect.stringContaining(message) });
    }
    const ahead = await rpc(node.url, 'getSignaturesForAddress', [address, { minContextSlot: node.slot + 10 }]);
    expect(ahead.body.error.code).toBe(-32016);
  });
});

describe('address history memory', () => {
  it('keeps only the most recent maxSignatureStatuses transactions, for every address', () => {
    const bank = new Bank({ chainId: 1, programId: new PublicKey(DEFAULT_PROGRAM_ID), slotIntervalMs: 0, maxSignatureStatuses: 3 });
    try {
      const first = randomKey().toBase58();
      const second = randomKey().toBase58();
      const [a1, a2] = [bank.airdrop(first, 1n), bank.airdrop(first, 1n)];
      const [b1, b2, b3] = [bank.airdrop(second, 1n), bank.airdrop(second, 1n), bank.airdrop(second, 1n)];
      expect(bank.at('processed').signaturesForAddress(first, { limit: 1000 })).toEqual([]);
      expect(
        bank
          .at('processed')
          .signaturesForAddress(second, { limit: 1000 })
          .map((info) => info.signature),
      ).toEqual([b3, b2, b1]);
      expect(bank.signatureStatus(a1)).toBeUndefined();
      expect(bank.signatureStatus(a2)).toBeUndefined();
    } finally {
      bank.close();
    }
  });
});

describe('getTransaction', () => {
  it('answers a landed transaction in base64 with slot, blockTime, meta {err, status, fee, logMessages, computeUnitsConsumed} and version', async () => {
    const depositor = Keypair.generate();
    node.airdrop(depositor.publicKey, 1_000_000_000);
    const wire = await signedWire(connection, [setup.deposit(9n, depositor)], [depositor]);
    const signature = await connection.sendRawTransaction(wire);
    const { body } = await rpc(node.url, 'getTransaction', [signature, { encoding: 'base64', commitment: 'confirmed' }]);
    const [info] = await connection.getSignaturesForAddress(depositor.publicKey, { limit: 1 });
    expect(body.result).toEqual({
      slot: info!.slot,
      blockTime: info!.blockTime,
      transaction: [wire.toString('base64'), 'base64'],
      meta: {
        err: null,
        status: { Ok: null },
        fee: 5000,
        logMessages: expect.arrayContaining([`Program ${node.programId.toBase58()} consumed 10000 of 200000 compute units`]),
        computeUnitsConsumed: 10_000,
      },
      version: 'legacy',
    });
    const unknown = await rpc(node.url, 'getTransaction', [bs58.encode(Keypair.generate().secretKey), { encoding: 'base64' }]);
    expect(unknown.body.result).toBeNull();
  });

  it('refuses the json encoding, a processed commitment, and a v0 transaction without maxSupportedTransactionVersion', async () => {
    const signature = await connection.sendRawTransaction(await signedWire(connection, [setup.deposit(10n)], [setup.payer]));
    const json = await rpc(node.url, 'getTransaction', [signature]);
    expect(json.body.error).toMatchObject({ code: -32602, message: expect.stringContaining('encoding') });
    const processed = await rpc(node.url, 'getTransaction', [signature, { encoding: 'base64', commitment: 'processed' }]);
    expect(processed.body.error.message).toContain('commitment below `confirmed`');

    const { blockhash } = await connection.getLatestBlockhash();
    const v0 = new VersionedTransaction(
      MessageV0.compile({ payerKey: setup.payer.publicKey, recentBlockhash: blockhash, instructions: [setup.deposit(11n)] }),
    );
    v0.sign([setup.payer]);
    const v0Signature = await connection.sendRawTransaction(v0.serialize());
    const refused = await rpc(node.url, 'getTransaction', [v0Signature, { encoding: 'base64' }]);
    expect(refused.body.error.code).toBe(-32015);
    const answered = await rpc(node.url, 'getTransaction', [v0Signature, { encoding: 'base64', maxSupportedTransactionVersion: 0 }]);
    expect(answered.body.result.version).toBe(0);
  });
});
