import { ComputeBudgetProgram, Connection, Keypair, NONCE_ACCOUNT_LENGTH, NonceAccount, PublicKey, SystemProgram, type TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDevnetNode, type DevnetNode } from '../../../devnet/node.js';
import { fundedKeypair, randomKey, rpc, sendWire, signedWire } from '../rpc/helpers.js';

/**
 * The faults that reproduce issue 31's mixed answers: a primary that takes a transaction, loses
 * its answer (HTTP 504) and lands it slots later; a lagging fallback that refuses the same
 * bytes with BlockhashNotFound; and a fee history that shows a surge as Agave's cache does.
 */

let node: DevnetNode;
let connection: Connection;

beforeEach(async () => {
  node = await startDevnetNode({ name: 'target', chainId: 2, slotIntervalMs: 0 });
  connection = new Connection(node.url, 'confirmed');
});

afterEach(async () => {
  await node.close();
});

const signatureOf = (wire: Buffer) => bs58.encode(wire.subarray(1, 65));

async function status(signature: string) {
  return (await rpc(node.url, 'getSignatureStatuses', [[signature], { searchTransactionHistory: true }])).body.result.value[0];
}

const pay = (from: Keypair, lamports = 1_000_000) => SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: randomKey(), lamports });
const priced = (microLamports: number, from: Keypair): TransactionInstruction[] => [
  ComputeBudgetProgram.setComputeUnitLimit({ units: 1_000 }),
  ComputeBudgetProgram.setComputeUnitPrice({ microLamports }),
  pay(from),
];

async function nonceAccount(authority: Keypair): Promise<PublicKey> {
  const address = await PublicKey.createWithSeed(authority.publicKey, 'nonce-0', SystemProgram.programId);
  const create = SystemProgram.createAccountWithSeed({
    fromPubkey: authority.publicKey,
    basePubkey: authority.publicKey,
    seed: 'nonce-0',
    newAccountPubkey: address,
    lamports: 1_447_680,
    space: NONCE_ACCOUNT_LENGTH,
    programId: SystemProgram.programId,
  });
  const init = SystemProgram.nonceInitialize({ noncePubkey: address, authorizedPubkey: authority.publicKey });
  expect((await sendWire(node.url, await signedWire(connection, [create, init], [authority]))).body.error).toBeUndefined();
  return address;
}

describe('in-flight delays (landAfterSlots) and lost answers (HTTP 504)', () => {
  it('the primary takes the transaction, answers HTTP 504, and it lands 40 slots later', async () => {
    const payer = fundedKeypair(node);
    node.faults.set({ landAfterSlots: 40, loseResponses: 1, loseResponseMode: 'http504' });
    const wire = await signedWire(connection, [pay(payer)], [payer]);
    const sent = await sendWire(node.url, wire);
    expect(sent.status).toBe(504);
    expect(sent.body).toBe('Gateway Timeout');
    expect(node.faults.snapshot()).toMatchObject({ landAfterSlots: 40, inFlight: 1, loseResponses: 0, loseResponseMode: 'http504' });
    const sentAt = node.slot;
    // Sent again, as a sender that saw no answer would: the same bytes, in flight twice.
    const id = (await sendWire(node.url, wire, true)).body.result as string;
    expect(id).toBe(signatureOf(wire));
    node.advanceSlots(39);
    expect(await status(id)).toBeNull();
    node.advanceSlots(1);
    expect(await status(id)).toMatchObject({ err: null, slot: sentAt + 40 });
    // The same bytes were taken twice; they land once.
    node.advanceSlots(40);
    expect(node.faults.snapshot().inFlight).toBe(0);
    expect(node.feesPaid(payer.publicKey).transactions).toBe(1);
  });

  it('a blockhash transaction in flight past its blockhash lifetime never lands', async () => {
    const payer = fundedKeypair(node);
    node.faults.set({ landAfterSlots: 160 });
    const id = (await sendWire(node.url, await signedWire(connection, [pay(payer)], [payer]))).body.result as string;
    node.advanceSlots(200);
    expect(await status(id)).toBeNull();
    expect(node.faults.snapshot().inFlight).toBe(0);
  });

  it('two versions of one nonce: the one in flight on the primary is refused when it arrives after the other landed', async () => {
    const authority = fundedKeypair(node, 10_000_000_000);
    const nonce = await nonceAccount(authority);
    const value = NonceAccount.fromAccountData((await connection.getAccountInfo(nonce))!.data).nonce;
    const advance = SystemProgram.nonceAdvance({ noncePubkey: nonce, authorizedPubkey: authority.publicKey });
    const slow = await signedWire(connection, [advance, ...priced(1_000, authority)], [authority], value);
    const repriced = await signedWire(connection, [advance, ...priced(20_000, authority)], [authority], value);
    const fallback = await node.addEndpoint();
    node.faults.set({ landAfterSlots: 40, loseResponses: 1, loseResponseMode: 'http504' });
    expect((await sendWire(node.url, slow)).status).toBe(504);
    const landed = (await sendWire(fallback.url, repriced)).body.result as string;
    expect(await status(landed)).toMatchObject({ err: null });
    node.advanceSlots(41);
    expect(node.faults.snapshot().inFlight).toBe(0);
    expect(await status(signatureOf(slow))).toBeNull();
    expect(node.feesPaid(authority.publicKey).transactions).toBe(2);
  });
});

describe('a lagging endpoint (blockhashLagSlots)', () => {
  it('answers an older latest blockhash and refuses newer ones with BlockhashNotFound in preflight; without preflight they are forwarded and land', async () => {
    const payer = fundedKeypair(node);
    node.advanceSlots(20);
    const lagging = await node.addEndpoint();
    lagging.faults.set({ blockhashLagSlots: 5 });
    const { blockhash } = await connection.getLatestBlockhash();
    const known = (await rpc(lagging.url, 'getLatestBlockhash', [])).body.result.value;
    expect(known.blockhash).not.toBe(blockhash);
    expect(known.lastValidBlockHeight).toBe(node.slot - 5 + 150);
    const wire = await signedWire(connection, [pay(payer)], [payer], blockhash);
    const refused = await sendWire(lagging.url, wire);
    expect(refused.body.error).toMatchObject({ code: -32002, message: 'Transaction simulation failed: Blockhash not found', data: { err: 'BlockhashNotFound' } });
    const simulated = await rpc(lagging.url, 'simulateTransaction', [wire.toString('base64'), { encoding: 'base64' }]);
    expect(simulated.body.result.value.err).toBe('BlockhashNotFound');
    const forwarded = (await sendWire(lagging.url, wire, true)).body.result as string;
    expect(await status(forwarded)).toMatchObject({ err: null });
    const older = (await sendWire(lagging.url, await signedWire(connection, [pay(payer)], [payer], known.blockhash))).body;
    expect(older.error).toBeUndefined();
    expect(lagging.faults.snapshot().blockhashLagSlots).toBe(5);
  });
});

describe('fee history under a surge (feeHistory)', () => {
  async function recentFees(addresses: string[]): Promise<Array<{ slot: number; prioritizationFee: number }>> {
    return (await rpc(node.url, 'getRecentPrioritizationFees', [addresses])).body.result;
  }

  it('minimum: per-slot minimums as Agave reports them, 0 except where the queried accounts were written; floor: the floor in every slot', async () => {
    const payer = fundedKeypair(node);
    node.faults.set({ priceFloor: 20_000, feeHistory: 'minimum' });
    const first = node.slot;
    node.advanceSlots(5);
    const id = (await sendWire(node.url, await signedWire(connection, priced(20_000, payer), [payer]))).body.result as string;
    const landedIn = (await status(id)).slot as number;
    node.advanceSlots(5);
    const writer = await recentFees([payer.publicKey.toBase58()]);
    const surge = writer.filter((fee) => fee.slot >= first);
    expect(surge.find((fee) => fee.slot === landedIn)?.prioritizationFee).toBe(20_000);
    expect(surge.filter((fee) => fee.slot !== landedIn).every((fee) => fee.prioritizationFee === 0)).toBe(true);
    expect((await recentFees([randomKey().toBase58()])).every((fee) => fee.prioritizationFee === 0)).toBe(true);
    expect(node.faults.snapshot().feeHistory).toBe('minimum');
    node.faults.set({ feeHistory: 'floor' });
    const floorFrom = node.slot;
    node.advanceSlots(3);
    const shown = (await recentFees([randomKey().toBase58()])).filter((fee) => fee.slot >= floorFrom);
    expect(shown.map((fee) => fee.prioritizationFee)).toEqual([20_000, 20_000, 20_000]);
    expect(node.faults.clear().feeHistory).toBe('floor');
  });

  it('rejects an unknown mode and out-of-range delays, naming the field', async () => {
    for (const [settings, field] of [
      [{ feeHistory: 'max' }, 'faults.feeHistory'],
      [{ landAfterSlots: 10_001 }, 'faults.landAfterSlots'],
      [{ blockhashLagSlots: -1 }, 'faults.blockhashLagSlots'],
      [{ loseResponseMode: 'http503' }, 'faults.loseResponseMode'],
    ] as const) {
      const { body } = await rpc(node.url, 'devnet_setFaults', [settings]);
      expect(body.error).toMatchObject({ code: -32602, message: expect.stringContaining(field) });
    }
  });
});
