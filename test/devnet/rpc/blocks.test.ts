import { ComputeBudgetProgram, Connection, Keypair, NonceAccount, SystemProgram } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDevnetNode, type DevnetNode } from '../../../devnet/node.js';
import { randomKey, rpc, seededNonceAccount, signedWire } from './helpers.js';

/**
 * A block holds what arrives within its slot, in arrival order, as a leader's does. The slot
 * timer here is a minute (no slot passes by itself within a test); slots move with advanceSlots.
 */

const NONCE_RENT = 1_447_680;

let node: DevnetNode;
let connection: Connection;

beforeEach(async () => {
  node = await startDevnetNode({ name: 'source', chainId: 1, slotIntervalMs: 60_000 });
  connection = new Connection(node.url, 'processed');
});

afterEach(async () => {
  await node.close();
});

const signatureOf = (wire: Buffer) => bs58.encode(wire.subarray(1, 65));
const send = (wire: Buffer, skipPreflight = false) =>
  rpc(node.url, 'sendTransaction', [wire.toString('base64'), { encoding: 'base64', skipPreflight }]);

async function statusOf(signature: string) {
  return (await rpc(node.url, 'getSignatureStatuses', [[signature]])).body.result.value[0];
}

describe('several transactions per slot', () => {
  it('land in one block in arrival order; history lists them newest first and bounds by position; the fee history takes the slot minimum', async () => {
    const payer = Keypair.generate();
    node.airdrop(payer.publicKey, 1_000_000_000);
    node.advanceSlots(1);
    const slot = node.slot;
    const wires = [];
    for (const price of [3, 1, 2]) {
      const ixs = [
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: price }),
        SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: randomKey(), lamports: 1_000_000 }),
      ];
      const wire = await signedWire(connection, ixs, [payer]);
      expect((await send(wire)).body.error).toBeUndefined();
      wires.push(wire);
    }
    const signatures = wires.map(signatureOf);
    for (const signature of signatures) expect(await statusOf(signature)).toMatchObject({ slot, err: null });
    expect(node.slot).toBe(slot);
    const listed = async (config: Record<string, unknown>) =>
      (
        (await rpc(node.url, 'getSignaturesForAddress', [payer.publicKey.toBase58(), { commitment: 'confirmed', ...config }])).body.result as Array<{
          signature: string;
        }>
      ).map((entry) => entry.signature);
    expect((await listed({})).slice(0, 3)).toEqual([...signatures].reverse());
    expect(await listed({ before: signatures[2], limit: 1 })).toEqual([signatures[1]]);
    expect(await listed({ until: signatures[0] })).toEqual([signatures[2], signatures[1]]);
    node.advanceSlots(1);
    const fees = (await rpc(node.url, 'getRecentPrioritizationFees', [])).body.result as Array<{ slot: number; prioritizationFee: number }>;
    expect(fees.find((fee) => fee.slot === slot)?.prioritizationFee).toBe(1);
  });

  it('a second durable-nonce transaction on one nonce account in one slot is refused (BlockhashNotFound), as Agave refuses a nonce this slot already advanced', async () => {
    const authority = Keypair.generate();
    node.airdrop(authority.publicKey, 1_000_000_000);
    const { address: nonce, instructions: create } = await seededNonceAccount(authority.publicKey, 'slot', NONCE_RENT);
    expect((await send(await signedWire(connection, create, [authority]))).body.error).toBeUndefined();
    node.advanceSlots(1);
    const value = NonceAccount.fromAccountData((await connection.getAccountInfo(nonce))!.data).nonce;
    const version = (lamports: number) =>
      signedWire(
        connection,
        [
          SystemProgram.nonceAdvance({ noncePubkey: nonce, authorizedPubkey: authority.publicKey }),
          SystemProgram.transfer({ fromPubkey: authority.publicKey, toPubkey: randomKey(), lamports }),
        ],
        [authority],
        value,
      );
    const first = await version(1_000_000);
    expect((await send(first)).body.error).toBeUndefined();
    // Another version against the same value, and one against the value the first stored: both in the slot that advanced it.
    const second = await version(2_000_000);
    expect((await send(second)).body.error).toMatchObject({ code: -32002, data: { err: 'BlockhashNotFound' } });
    const advancedTo = NonceAccount.fromAccountData((await connection.getAccountInfo(nonce))!.data).nonce;
    const onNewValue = await signedWire(
      connection,
      [
        SystemProgram.nonceAdvance({ noncePubkey: nonce, authorizedPubkey: authority.publicKey }),
        SystemProgram.transfer({ fromPubkey: authority.publicKey, toPubkey: randomKey(), lamports: 3_000_000 }),
      ],
      [authority],
      advancedTo,
    );
    expect((await send(onNewValue)).body.error).toMatchObject({ code: -32002, data: { err: 'BlockhashNotFound' } });
    expect((await send(onNewValue, true)).body.result).toBe(signatureOf(onNewValue));
    expect(await statusOf(signatureOf(onNewValue))).toBeNull();
    // In the next slot the nonce may advance again.
    node.advanceSlots(1);
    expect((await send(onNewValue)).body.error).toBeUndefined();
    expect(await statusOf(signatureOf(onNewValue))).toMatchObject({ slot: node.slot, err: null });
  });
});
