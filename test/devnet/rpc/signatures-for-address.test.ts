import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PROGRAM_ID } from '../../../src/chain/codec/layout.js';
import { Bank } from '../../../src/devnet/bank/bank.js';
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
      expect(bank.signaturesForAddress(first, { limit: 1000 })).toEqual([]);
      expect(bank.signaturesForAddress(second, { limit: 1000 }).map((info) => info.signature)).toEqual([b3, b2, b1]);
      expect(bank.signatureStatus(a1)).toBeUndefined();
      expect(bank.signatureStatus(a2)).toBeUndefined();
    } finally {
      bank.close();
    }
  });
});
