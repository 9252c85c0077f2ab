import { Connection, Keypair, NonceAccount, type PublicKey, SystemProgram } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDevnetNode, type DevnetNode } from '../../../devnet/node.js';
import { randomKey, rpc, seededNonceAccount, signedWire } from '../rpc/helpers.js';

/**
 * Minority forks on demand (`abandonSlots`, `forkShare`; bank/minority-forks.ts), over
 * JSON-RPC: a slot's transactions are processed, then abandoned before the confirmed bank
 * reaches them (statuses gone, state rolled back, the blockhashes made on the fork unknown).
 * Confirmed 2 and finalized 4 slots behind; slots pass only with transactions and advanceSlots.
 */

const CONFIRMED_LAG = 2;
const NONCE_RENT = 1_447_680;

let node: DevnetNode;
let connection: Connection;

beforeEach(async () => {
  node = await startDevnetNode({
    name: 'source',
    chainId: 1,
    slotIntervalMs: 0,
    commitmentLags: { confirmedLagSlots: CONFIRMED_LAG, finalizedLagSlots: 4 },
  });
  connection = new Connection(node.url, 'processed');
});

afterEach(async () => {
  await node.close();
});

const signatureOf = (wire: Buffer) => bs58.encode(wire.subarray(1, 65));

/** Preflight on the processed bank, where the blockhashes these tests sign with are. */
const send = (wire: Buffer) => rpc(node.url, 'sendTransaction', [wire.toString('base64'), { encoding: 'base64', preflightCommitment: 'processed' }]);

async function status(signature: string) {
  return (await rpc(node.url, 'getSignatureStatuses', [[signature], { searchTransactionHistory: true }])).body.result.value[0];
}

async function balance(address: PublicKey, commitment = 'processed'): Promise<number> {
  return (await rpc(node.url, 'getBalance', [address.toBase58(), { commitment }])).body.result.value;
}

/** A payer whose airdrop is confirmed (so a fork never takes it). */
function confirmedPayer(): Keypair {
  const payer = Keypair.generate();
  node.airdrop(payer.publicKey, 1_000_000_000);
  node.advanceSlots(CONFIRMED_LAG);
  return payer;
}

describe('abandonSlots', () => {
  it('a slot on a minority fork is processed, never confirmed, then abandoned: status gone, state rolled back', async () => {
    const payer = confirmedPayer();
    const recipient = randomKey();
    const payerBefore = await balance(payer.publicKey);
    expect(node.faults.set({ abandonSlots: 1 })).toMatchObject({ abandonSlots: 1, abandonedForks: 0 });
    const wire = await signedWire(
      connection,
      [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipient, lamports: 5_000_000 })],
      [payer],
    );
    expect((await send(wire)).body.error).toBeUndefined();
    const signature = signatureOf(wire);
    expect(await status(signature)).toMatchObject({ confirmationStatus: 'processed', err: null });
    expect(await balance(recipient)).toBe(5_000_000);
    expect(await balance(recipient, 'confirmed')).toBe(0);
    // Its slot ended with it (no slot timer here): the head is one slot on; one more and the confirmed bank would reach it.
    expect(node.slot - (await status(signature)).slot).toBe(CONFIRMED_LAG - 1);
    node.advanceSlots(1);
    expect(await status(signature)).toBeNull();
    expect(await balance(recipient)).toBe(0);
    expect(await balance(payer.publicKey)).toBe(payerBefore);
    const history = (await rpc(node.url, 'getSignaturesForAddress', [payer.publicKey.toBase58(), { commitment: 'confirmed' }])).body.result;
    expect(history.map((entry: { signature: string }) => entry.signature)).not.toContain(signature);
    expect(node.faults.snapshot()).toMatchObject({ abandonSlots: 0, abandonedForks: 1, abandonedTransactions: 1 });
    // The same bytes land again on the majority fork: their blockhash was made before the fork.
    expect((await send(wire)).body.error).toBeUndefined();
    node.advanceSlots(CONFIRMED_LAG);
    expect(await status(signature)).toMatchObject({ confirmationStatus: 'confirmed', err: null });
    expect(await balance(recipient, 'confirmed')).toBe(5_000_000);
  });

  it('a durable nonce advanced on the abandoned fork is back at its old value: the version signed against it lands', async () => {
    const authority = confirmedPayer();
    const { address: nonce, instructions: create } = await seededNonceAccount(authority.publicKey, 'fork', NONCE_RENT);
    expect((await send(await signedWire(connection, create, [authority]))).body.error).toBeUndefined();
    node.advanceSlots(CONFIRMED_LAG);
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
    const [first, second] = [await version(1_000_000), await version(2_000_000)];
    node.faults.set({ abandonSlots: 1 });
    expect((await send(first)).body.error).toBeUndefined();
    expect((await send(second)).body.error).toMatchObject({ code: -32002, data: { err: 'BlockhashNotFound' } });
    node.advanceSlots(CONFIRMED_LAG);
    expect(await status(signatureOf(first))).toBeNull();
    expect(NonceAccount.fromAccountData((await connection.getAccountInfo(nonce))!.data).nonce).toBe(value);
    expect((await send(second)).body.error).toBeUndefined();
    node.advanceSlots(CONFIRMED_LAG);
    expect(await status(signatureOf(second))).toMatchObject({ confirmationStatus: 'confirmed', err: null });
  });

  it('a blockhash made on the fork is unknown once it is abandoned', async () => {
    const payer = confirmedPayer();
    node.faults.set({ abandonSlots: 1 });
    const onFork = await signedWire(
      connection,
      [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: randomKey(), lamports: 1_000_000 })],
      [payer],
    );
    expect((await send(onFork)).body.error).toBeUndefined();
    const forkBlockhash = (await connection.getLatestBlockhash('processed')).blockhash;
    const later = await signedWire(
      connection,
      [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: randomKey(), lamports: 1_000_000 })],
      [payer],
      forkBlockhash,
    );
    node.advanceSlots(CONFIRMED_LAG);
    expect((await send(later)).body.error).toMatchObject({ code: -32002, data: { err: 'BlockhashNotFound' } });
    // Every bank still answers a blockhash the majority fork made, with its own lifetime.
    for (const commitment of ['processed', 'confirmed']) {
      const { context, value } = (await rpc(node.url, 'getLatestBlockhash', [{ commitment }])).body.result;
      expect(value.lastValidBlockHeight).toBeLessThanOrEqual(context.slot + 150);
      const wire = await signedWire(
        connection,
        [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: randomKey(), lamports: 1_000_000 })],
        [payer],
        value.blockhash,
      );
      const sent = await rpc(node.url, 'sendTransaction', [wire.toString('base64'), { encoding: 'base64', preflightCommitment: commitment }]);
      expect(sent.body.error, commitment).toBeUndefined();
    }
  });

  it('is refused without a confirmed lag: every processed slot would be confirmed at once', async () => {
    const flat = await startDevnetNode({ name: 'target', chainId: 2, slotIntervalMs: 0 });
    try {
      const { body } = await rpc(flat.url, 'devnet_setFaults', [{ abandonSlots: 1 }]);
      expect(body.error).toMatchObject({ code: -32602, message: expect.stringContaining('confirmedLagSlots >= 1') });
    } finally {
      await flat.close();
    }
  });
});

describe('forkShare', () => {
  it('forks that share of the slots holding transactions (seeded); clear stops it', async () => {
    const payer = confirmedPayer();
    node.faults.set({ seed: 7, forkShare: 1 });
    const signatures: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const wire = await signedWire(
        connection,
        [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: randomKey(), lamports: 1_000_000 })],
        [payer],
      );
      expect((await send(wire)).body.error).toBeUndefined();
      signatures.push(signatureOf(wire));
      node.advanceSlots(CONFIRMED_LAG);
    }
    for (const signature of signatures) expect(await status(signature)).toBeNull();
    expect(node.faults.snapshot()).toMatchObject({ forkShare: 1, abandonedForks: 3, abandonedTransactions: 3 });
    node.faults.clear();
    const wire = await signedWire(
      connection,
      [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: randomKey(), lamports: 1_000_000 })],
      [payer],
    );
    await send(wire);
    node.advanceSlots(CONFIRMED_LAG);
    expect(await status(signatureOf(wire))).toMatchObject({ confirmationStatus: 'confirmed' });
  });
});
