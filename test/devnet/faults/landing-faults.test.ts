import {
  ComputeBudgetProgram,
  type Keypair,
  NONCE_ACCOUNT_LENGTH,
  NonceAccount,
  PublicKey,
  SystemProgram,
  type TransactionInstruction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { fundedKeypair, randomKey, rpc, sendWire, signedWire, testNode } from '../rpc/helpers.js';

/**
 * The faults that reproduce issue 31's mixed answers: a primary that takes a transaction, loses
 * its answer (HTTP 504) and lands it slots later; a lagging fallback that refuses the same
 * bytes with BlockhashNotFound; and a fee history that shows a surge as Agave's cache does.
 */

const chain = testNode('each');

const signatureOf = (wire: Buffer) => bs58.encode(wire.subarray(1, 65));

async function status(signature: string) {
  return (await rpc(chain.node.url, 'getSignatureStatuses', [[signature], { searchTransactionHistory: true }])).body.result.value[0];
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
  expect((await sendWire(chain.node.url, await signedWire(chain.connection, [create, init], [authority]))).body.error).toBeUndefined();
  return address;
}

describe('in-flight delays (landAfterSlots) and lost answers (HTTP 504)', () => {
  it('the primary takes the transaction, answers HTTP 504, and it lands 40 slots later', async () => {
    const payer = fundedKeypair(chain.node);
    chain.node.faults.set({ landAfterSlots: 40, loseResponses: 1, loseResponseMode: 'http504' });
    const wire = await signedWire(chain.connection, [pay(payer)], [payer]);
    const sent = await sendWire(chain.node.url, wire);
    expect(sent.status).toBe(504);
    expect(sent.body).toBe('Gateway Timeout');
    expect(chain.node.faults.snapshot()).toMatchObject({ landAfterSlots: 40, inFlight: 1, loseResponses: 0, loseResponseMode: 'http504' });
    const sentAt = chain.node.slot;
    // Sent again, as a sender that saw no answer would: the same bytes, in flight twice.
    const id = (await sendWire(chain.node.url, wire, true)).body.result as string;
    expect(id).toBe(signatureOf(wire));
    chain.node.advanceSlots(39);
    expect(await status(id)).toBeNull();
    chain.node.advanceSlots(1);
    expect(await status(id)).toMatchObject({ err: null, slot: sentAt + 40 });
    // The same bytes were taken twice; they land once.
    chain.node.advanceSlots(40);
    expect(chain.node.faults.snapshot().inFlight).toBe(0);
    expect(chain.node.feesPaid(payer.publicKey).transactions).toBe(1);
  });

  it('a blockhash transaction in flight past its blockhash lifetime never lands', async () => {
    const payer = fundedKeypair(chain.node);
    chain.node.faults.set({ landAfterSlots: 160 });
    const id = (await sendWire(chain.node.url, await signedWire(chain.connection, [pay(payer)], [payer]))).body.result as string;
    chain.node.advanceSlots(200);
    expect(await status(id)).toBeNull();
    expect(chain.node.faults.snapshot().inFlight).toBe(0);
  });

  it('blockhash mode, the mixed answers of issue 31: a 504 from the primary, BlockhashNotFound from the lagging fallback, and both versions land', async () => {
    const payer = fundedKeypair(chain.node, 10_000_000_000);
    chain.node.advanceSlots(10);
    const fallback = await chain.node.addEndpoint();
    fallback.faults.set({ blockhashLagSlots: 5 });
    chain.node.faults.set({ landAfterSlots: 40, loseResponses: 1, loseResponseMode: 'http504' });
    const first = await signedWire(chain.connection, priced(1_000, payer), [payer]);
    expect((await sendWire(chain.node.url, first)).status).toBe(504);
    expect((await sendWire(fallback.url, first)).body.error).toMatchObject({ data: { err: 'BlockhashNotFound' } });
    chain.node.faults.set({ landAfterSlots: 0 });
    const resigned = await signedWire(chain.connection, priced(20_000, payer), [payer]);
    expect(await status((await sendWire(chain.node.url, resigned)).body.result as string)).toMatchObject({ err: null });
    chain.node.advanceSlots(40);
    expect(await status(signatureOf(first))).toMatchObject({ err: null });
    expect(chain.node.feesPaid(payer.publicKey).transactions).toBe(2);
  });

  it('two versions of one nonce: the one in flight on the primary is refused when it arrives after the other landed', async () => {
    const authority = fundedKeypair(chain.node, 10_000_000_000);
    const nonce = await nonceAccount(authority);
    const value = NonceAccount.fromAccountData((await chain.connection.getAccountInfo(nonce))!.data).nonce;
    const advance = SystemProgram.nonceAdvance({ noncePubkey: nonce, authorizedPubkey: authority.publicKey });
    const slow = await signedWire(chain.connection, [advance, ...priced(1_000, authority)], [authority], value);
    const repriced = await signedWire(chain.connection, [advance, ...priced(20_000, authority)], [authority], value);
    const fallback = await chain.node.addEndpoint();
    chain.node.faults.set({ landAfterSlots: 40, loseResponses: 1, loseResponseMode: 'http504' });
    expect((await sendWire(chain.node.url, slow)).status).toBe(504);
    const landed = (await sendWire(fallback.url, repriced)).body.result as string;
    expect(await status(landed)).toMatchObject({ err: null });
    chain.node.advanceSlots(41);
    expect(chain.node.faults.snapshot().inFlight).toBe(0);
    expect(await status(signatureOf(slow))).toBeNull();
    expect(chain.node.feesPaid(authority.publicKey).transactions).toBe(2);
  });
});

describe('durable-nonce transactions under a price floor', () => {
  it('a version priced below the floor waits past any blockhash lifetime and lands when the floor falls; a version whose nonce moved never does', async () => {
    const authority = fundedKeypair(chain.node, 10_000_000_000);
    const nonce = await nonceAccount(authority);
    const value = NonceAccount.fromAccountData((await chain.connection.getAccountInfo(nonce))!.data).nonce;
    const advance = SystemProgram.nonceAdvance({ noncePubkey: nonce, authorizedPubkey: authority.publicKey });
    chain.node.faults.set({ priceFloor: 20_000 });
    const cheap = await signedWire(chain.connection, [advance, ...priced(1_000, authority)], [authority], value);
    expect((await sendWire(chain.node.url, cheap)).body.error).toBeUndefined();
    chain.node.advanceSlots(300);
    expect(chain.node.faults.snapshot().waitingBelowFloor).toBe(1);
    chain.node.faults.set({ priceFloor: 1_000 });
    expect(await status(signatureOf(cheap))).toMatchObject({ err: null });

    const next = NonceAccount.fromAccountData((await chain.connection.getAccountInfo(nonce))!.data).nonce;
    chain.node.faults.set({ priceFloor: 20_000 });
    const stuck = await signedWire(chain.connection, [advance, ...priced(1_000, authority)], [authority], next);
    const repriced = await signedWire(chain.connection, [advance, ...priced(20_000, authority)], [authority], next);
    await sendWire(chain.node.url, stuck);
    expect(await status((await sendWire(chain.node.url, repriced)).body.result as string)).toMatchObject({ err: null });
    chain.node.faults.set({ priceFloor: 0 });
    expect(await status(signatureOf(stuck))).toBeNull();
    expect(chain.node.faults.snapshot().waitingBelowFloor).toBe(0);
  });
});

describe('a lagging endpoint (blockhashLagSlots)', () => {
  it('answers an older latest blockhash and refuses newer ones with BlockhashNotFound in preflight; without preflight they are forwarded and land', async () => {
    const payer = fundedKeypair(chain.node);
    chain.node.advanceSlots(20);
    const lagging = await chain.node.addEndpoint();
    lagging.faults.set({ blockhashLagSlots: 5 });
    const { blockhash } = await chain.connection.getLatestBlockhash();
    const known = (await rpc(lagging.url, 'getLatestBlockhash', [])).body.result.value;
    expect(known.blockhash).not.toBe(blockhash);
    expect(known.lastValidBlockHeight).toBe(chain.node.slot - 5 + 150);
    const wire = await signedWire(chain.connection, [pay(payer)], [payer], blockhash);
    const refused = await sendWire(lagging.url, wire);
    expect(refused.body.error).toMatchObject({
      code: -32002,
      message: 'Transaction simulation failed: Blockhash not found',
      data: { err: 'BlockhashNotFound' },
    });
    const simulated = await rpc(lagging.url, 'simulateTransaction', [wire.toString('base64'), { encoding: 'base64' }]);
    expect(simulated.body.result.value.err).toBe('BlockhashNotFound');
    const forwarded = (await sendWire(lagging.url, wire, true)).body.result as string;
    expect(await status(forwarded)).toMatchObject({ err: null });
    const older = (await sendWire(lagging.url, await signedWire(chain.connection, [pay(payer)], [payer], known.blockhash))).body;
    expect(older.error).toBeUndefined();
    expect(lagging.faults.snapshot().blockhashLagSlots).toBe(5);
  });
});

describe('a lying node (simulateUnitsConsumed)', () => {
  it('claims the units it is told in every simulation, its error as it is; an honest endpoint beside it reports what was used', async () => {
    const payer = fundedKeypair(chain.node);
    const liar = await chain.node.addEndpoint();
    liar.faults.set({ simulateUnitsConsumed: 1_400_000 });
    const simulate = async (url: string, wire: Buffer) =>
      (await rpc(url, 'simulateTransaction', [wire.toString('base64'), { encoding: 'base64' }])).body.result.value;
    const wire = await signedWire(chain.connection, [pay(payer)], [payer]);
    expect(await simulate(liar.url, wire)).toMatchObject({ err: null, unitsConsumed: 1_400_000 });
    expect(await simulate(chain.node.url, wire)).toMatchObject({ err: null, unitsConsumed: 150 });
    const failing = await signedWire(chain.connection, [pay(payer, 10_000_000_000)], [payer]);
    expect(await simulate(liar.url, failing)).toMatchObject({ err: { InstructionError: [0, { Custom: 1 }] }, unitsConsumed: 1_400_000 });
    expect(liar.faults.set({ simulateUnitsConsumed: null }).simulateUnitsConsumed).toBeNull();
    expect(await simulate(liar.url, wire)).toMatchObject({ unitsConsumed: 150 });
  });
});

describe('fee history under a surge (feeHistory)', () => {
  async function recentFees(addresses: string[]): Promise<Array<{ slot: number; prioritizationFee: number }>> {
    return (await rpc(chain.node.url, 'getRecentPrioritizationFees', [addresses])).body.result;
  }

  it('minimum: per-slot minimums as Agave reports them, 0 except where the queried accounts were written; floor: the floor in every slot', async () => {
    const payer = fundedKeypair(chain.node);
    chain.node.faults.set({ priceFloor: 20_000, feeHistory: 'minimum' });
    const first = chain.node.slot;
    chain.node.advanceSlots(5);
    const id = (await sendWire(chain.node.url, await signedWire(chain.connection, priced(20_000, payer), [payer]))).body.result as string;
    const landedIn = (await status(id)).slot as number;
    chain.node.advanceSlots(5);
    const writer = await recentFees([payer.publicKey.toBase58()]);
    const surge = writer.filter((fee) => fee.slot >= first);
    expect(surge.find((fee) => fee.slot === landedIn)?.prioritizationFee).toBe(20_000);
    expect(surge.filter((fee) => fee.slot !== landedIn).every((fee) => fee.prioritizationFee === 0)).toBe(true);
    expect((await recentFees([randomKey().toBase58()])).every((fee) => fee.prioritizationFee === 0)).toBe(true);
    expect(chain.node.faults.snapshot().feeHistory).toBe('minimum');
    chain.node.faults.set({ feeHistory: 'floor' });
    const floorFrom = chain.node.slot;
    chain.node.advanceSlots(3);
    const shown = (await recentFees([randomKey().toBase58()])).filter((fee) => fee.slot >= floorFrom);
    expect(shown.map((fee) => fee.prioritizationFee)).toEqual([20_000, 20_000, 20_000]);
    expect(chain.node.faults.clear().feeHistory).toBe('floor');
  });

  it('rejects an unknown mode and out-of-range delays, naming the field', async () => {
    for (const [settings, field] of [
      [{ feeHistory: 'max' }, 'faults.feeHistory'],
      [{ landAfterSlots: 10_001 }, 'faults.landAfterSlots'],
      [{ blockhashLagSlots: 151 }, 'faults.blockhashLagSlots'],
      [{ loseResponseMode: 'http503' }, 'faults.loseResponseMode'],
      [{ simulateUnitsConsumed: 1_400_001 }, 'faults.simulateUnitsConsumed'],
    ] as const) {
      const { body } = await rpc(chain.node.url, 'devnet_setFaults', [settings]);
      expect(body.error).toMatchObject({ code: -32602, message: expect.stringContaining(field) });
    }
  });
});
