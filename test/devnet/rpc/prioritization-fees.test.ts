import { ComputeBudgetProgram, type Keypair, SystemProgram, type TransactionInstruction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { fundedKeypair, randomKey, rpc, send as sendInstructions, testNode } from './helpers.js';

const chain = testNode('each');

const funded = () => fundedKeypair(chain.node);

function pricedTransfer(payer: Keypair, microLamports: number, to = randomKey()): TransactionInstruction[] {
  return [
    ComputeBudgetProgram.setComputeUnitLimit({ units: 1_000 }),
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports }),
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1_000_000 }),
  ];
}

async function send(instructions: TransactionInstruction[], payer: Keypair): Promise<string> {
  const body = await sendInstructions(chain.node, chain.connection, instructions, payer);
  expect(body.error).toBeUndefined();
  return body.result as string;
}

async function recentFees(addresses?: string[]): Promise<Array<{ slot: number; prioritizationFee: number }>> {
  const { body } = await rpc(chain.node.url, 'getRecentPrioritizationFees', addresses === undefined ? [] : [addresses]);
  return body.result;
}

async function status(signature: string) {
  return (await chain.connection.getSignatureStatuses([signature])).value[0];
}

describe('getRecentPrioritizationFees', () => {
  it('answers per completed slot, oldest first, the lowest price that landed in it (0 for an empty slot), for the last 150 slots', async () => {
    const payer = funded();
    const cheap = await send(pricedTransfer(payer, 7), payer);
    const slot = (await status(cheap))!.slot;
    chain.node.advanceSlots(3);
    const fees = await recentFees();
    expect(fees.map((fee) => fee.slot)).toEqual(Array.from({ length: chain.node.slot }, (_, i) => i));
    expect(fees.find((fee) => fee.slot === slot)?.prioritizationFee).toBe(7);
    expect(fees.filter((fee) => fee.slot !== slot).every((fee) => fee.prioritizationFee === 0)).toBe(true);
    chain.node.advanceSlots(200);
    const later = await recentFees();
    expect(later).toHaveLength(150);
    expect(later.at(-1)?.slot).toBe(chain.node.slot - 1);
  });

  it('with addresses, answers per slot the largest of the slot minimum and the minimum of the transactions writing them (Agave)', async () => {
    const payer = funded();
    const busy = randomKey();
    const signature = await send(pricedTransfer(payer, 300, busy), payer);
    const slot = (await status(signature))!.slot;
    const quiet = randomKey().toBase58();
    const forBusy = await recentFees([busy.toBase58()]);
    expect(forBusy.find((fee) => fee.slot === slot)?.prioritizationFee).toBe(300);
    expect((await recentFees([quiet])).find((fee) => fee.slot === slot)?.prioritizationFee).toBe(300);
  });

  it('refuses more than 128 addresses and an address that is not a public key, with -32602', async () => {
    const many = Array.from({ length: 129 }, () => randomKey().toBase58());
    expect((await rpc(chain.node.url, 'getRecentPrioritizationFees', [many])).body.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('Too many inputs provided; max 128'),
    });
    expect((await rpc(chain.node.url, 'getRecentPrioritizationFees', [['not-a-key']])).body.error.code).toBe(-32602);
    expect((await rpc(chain.node.url, 'getRecentPrioritizationFees', ['x'])).body.error.code).toBe(-32602);
    expect(await recentFees(Array.from({ length: 128 }, () => randomKey().toBase58()))).toEqual(expect.any(Array));
  });
});

describe('congestion: the price-floor fault', () => {
  it('accepts a transaction priced below the floor (preflight passes) and never lands it; one at the floor lands', async () => {
    const payer = funded();
    await rpc(chain.node.url, 'devnet_setFaults', [{ priceFloor: 20_000 }]);
    const cheap = await send(pricedTransfer(payer, 19_999), payer);
    const paying = await send(pricedTransfer(payer, 20_000), payer);
    expect(await status(cheap)).toBeNull();
    expect(await status(paying)).toMatchObject({ err: null });
    expect(chain.node.faults.snapshot()).toMatchObject({ priceFloor: 20_000, waitingBelowFloor: 1 });
    chain.node.advanceSlots(151);
    expect(await status(cheap)).toBeNull();
    // Its blockhash has expired: lowering the floor now lands nothing.
    chain.node.faults.set({ priceFloor: 0 });
    expect(await status(cheap)).toBeNull();
    expect(chain.node.feesPaid(payer.publicKey)).toEqual({ transactions: 1, base: 5_000n, priority: 20n, total: 5_020n });
  });

  it('lands a waiting transaction when the floor falls to its price before its blockhash expires', async () => {
    const payer = funded();
    chain.node.faults.set({ priceFloor: 5_000 });
    const waiting = await send(pricedTransfer(payer, 1_000), payer);
    chain.node.advanceSlots(10);
    expect(await status(waiting)).toBeNull();
    chain.node.faults.set({ priceFloor: 1_000 });
    expect(await status(waiting)).toMatchObject({ err: null });
  });

  it('a steady floor: every slot completed while it is set reports at least the floor; earlier slots keep their values', async () => {
    const before = chain.node.slot;
    chain.node.advanceSlots(2);
    chain.node.faults.set({ priceFloor: 20_000 });
    chain.node.advanceSlots(5);
    const fees = await recentFees();
    expect(fees.filter((fee) => fee.slot < before + 2).every((fee) => fee.prioritizationFee === 0)).toBe(true);
    expect(fees.filter((fee) => fee.slot >= before + 2).map((fee) => fee.prioritizationFee)).toEqual([20_000, 20_000, 20_000, 20_000, 20_000]);
    chain.node.faults.clear();
    chain.node.advanceSlots(1);
    expect((await recentFees()).at(-1)?.prioritizationFee).toBe(0);
  });

  it('a sudden surge: with the history frozen, slots keep reporting the old fee while the floor refuses what is priced below it', async () => {
    const payer = funded();
    const { body } = await rpc(chain.node.url, 'devnet_setFaults', [{ priceFloor: 20_000, freezeFeeHistory: true }]);
    expect(body.result).toMatchObject({ priceFloor: 20_000, freezeFeeHistory: true });
    chain.node.advanceSlots(5);
    expect((await recentFees()).every((fee) => fee.prioritizationFee === 0)).toBe(true);
    const cheap = await send(pricedTransfer(payer, 0), payer);
    const paying = await send(pricedTransfer(payer, 50_000), payer);
    expect(await status(cheap)).toBeNull();
    expect(await status(paying)).toMatchObject({ err: null });
    expect((await recentFees()).every((fee) => fee.prioritizationFee === 0)).toBe(true);
    chain.node.faults.set({ freezeFeeHistory: false });
    chain.node.advanceSlots(1);
    expect((await recentFees()).at(-1)?.prioritizationFee).toBe(20_000);
  });

  it('a surge on a congested chain: frozen, the history keeps reporting the old floor while the new one refuses what bids it', async () => {
    const payer = funded();
    chain.node.faults.set({ priceFloor: 20_000 });
    chain.node.advanceSlots(3);
    chain.node.faults.set({ priceFloor: 50_000, freezeFeeHistory: true });
    const atOldFloor = await send(pricedTransfer(payer, 20_000), payer);
    chain.node.advanceSlots(3);
    expect(await status(atOldFloor)).toBeNull();
    expect((await recentFees()).slice(-4).map((fee) => fee.prioritizationFee)).toEqual([20_000, 20_000, 20_000, 20_000]);
  });

  it('rejects a negative or fractional floor naming it', async () => {
    for (const priceFloor of [-1, 1.5, 'high']) {
      const { body } = await rpc(chain.node.url, 'devnet_setFaults', [{ priceFloor }]);
      expect(body.error).toMatchObject({ code: -32602, message: expect.stringContaining('priceFloor') });
    }
  });
});
