import { Connection, Keypair, MessageV0, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevnetNode, type DevnetNode } from '../../../src/devnet/node.js';
import { depositSetup, rpc, signedWire } from './helpers.js';

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

describe('getTransaction', () => {
  it('answers a landed transaction in base64 with slot, blockTime, meta {err, status, fee} and version', async () => {
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
      meta: { err: null, status: { Ok: null }, fee: 5000 },
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
