import { SystemProgram } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { parseTransaction, verifySignatures } from '../../../devnet/bank/transaction.js';
import { fundedKeypair, randomKey, rpc, sendWire, signedWire, testNode } from '../rpc/helpers.js';

/** A lying history node (forgedHistory): what it lists and answers, beside an honest endpoint of the same chain. */

const chain = testNode('each');

const history = async (url: string, address: string, config: Record<string, unknown> = {}) =>
  ((await rpc(url, 'getSignaturesForAddress', [address, config])).body.result as Array<{ signature: string; slot: number }>).map(
    ({ signature }) => signature,
  );

describe('forgedHistory', () => {
  it('lists forged transactions "signed" by the address above what landed, answers them in getTransaction, and their signatures do not verify', async () => {
    const authority = fundedKeypair(chain.node);
    const landed = (
      await sendWire(
        chain.node.url,
        await signedWire(
          chain.connection,
          [SystemProgram.transfer({ fromPubkey: authority.publicKey, toPubkey: randomKey(), lamports: 1_000_000 })],
          [authority],
        ),
      )
    ).body.result as string;
    const liar = await chain.node.addEndpoint();
    const address = authority.publicKey.toBase58();
    const snapshot = liar.faults.set({ forgedHistory: { address, transactions: 3 } });
    expect(snapshot.forgedHistory).toEqual({ address, transactions: 3, slot: chain.node.slot });
    const honest = await history(chain.node.url, address);
    const lied = await history(liar.url, address);
    expect(lied).toHaveLength(honest.length + 3);
    expect(lied.slice(3)).toEqual(honest);
    expect(honest[0]).toBe(landed);
    const forged = lied[0]!;
    const { body } = await rpc(liar.url, 'getTransaction', [forged, { encoding: 'base64' }]);
    expect(body.result).toMatchObject({ meta: { err: null, fee: 5_000 }, version: 'legacy' });
    const tx = parseTransaction(Buffer.from(body.result.transaction[0], 'base64'));
    expect(tx.accountKeys[0]).toBe(address);
    expect(tx.signature).toBe(forged);
    expect(verifySignatures(tx)).toBe(false);
    expect((await rpc(chain.node.url, 'getTransaction', [forged, { encoding: 'base64' }])).body.result).toBeNull();
    expect((await rpc(liar.url, 'getSignatureStatuses', [[forged]])).body.result.value).toEqual([null]);
    expect(await history(liar.url, address, { before: lied[2] })).toEqual(honest);
    expect(await history(liar.url, address, { limit: 2 })).toEqual(lied.slice(0, 2));
    expect(await history(liar.url, randomKey().toBase58())).toEqual([]);
    expect(liar.faults.set({ forgedHistory: null }).forgedHistory).toBeNull();
    expect(await history(liar.url, address)).toEqual(honest);
  });

  it('refuses an address that is not a public key and counts outside 1..1000, naming the field', async () => {
    for (const settings of [
      { forgedHistory: { address: 'nope', transactions: 1 } },
      { forgedHistory: { address: randomKey().toBase58(), transactions: 1_001 } },
    ]) {
      const { body } = await rpc(chain.node.url, 'devnet_setFaults', [settings]);
      expect(body.error).toMatchObject({ code: -32602, message: expect.stringContaining('faults.forgedHistory') });
    }
  });
});
