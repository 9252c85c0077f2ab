import { Keypair, SystemProgram } from '@solana/web3.js';
import bs58 from 'bs58';
import { describe, expect, it } from 'vitest';
import { fundedKeypair, randomKey, rpc, sendWire, signedWire, testNode } from '../rpc/helpers.js';

/**
 * A congested cluster's sending side (docs/devnet.md, "Congestion: forwarding and a staked
 * path"): a plain endpoint that forwards only a share of what it accepts, a second port of the
 * same chain ("staked") that forwards everything and may require a tip, and the slot each
 * signature was first received in.
 */

const chain = testNode('each');

const signatureOf = (wire: Buffer) => bs58.encode(wire.subarray(1, 65));

async function status(url: string, signature: string) {
  return (await rpc(url, 'getSignatureStatuses', [[signature], { searchTransactionHistory: true }])).body.result.value[0];
}

const pay = (from: Keypair) => SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: randomKey(), lamports: 1_000_000 });

describe('forwardShare and a staked endpoint', () => {
  it('forwardShare 0: accepted with its signature and never landed; the staked port lands the same bytes', async () => {
    const payer = fundedKeypair(chain.node);
    const staked = await chain.node.addEndpoint();
    chain.node.faults.set({ forwardShare: 0 });
    const wire = await signedWire(chain.connection, [pay(payer)], [payer]);
    const receivedAt = chain.node.slot;
    expect((await sendWire(chain.node.url, wire)).body.result).toBe(signatureOf(wire));
    chain.node.advanceSlots(5);
    expect(await status(chain.node.url, signatureOf(wire))).toBeNull();
    expect(chain.node.faults.snapshot()).toMatchObject({ forwardShare: 0, forwarded: 0, dropped: 1 });
    expect(chain.node.receivedSlot(signatureOf(wire))).toBe(receivedAt);
    expect((await sendWire(staked.url, wire, true)).body.result).toBe(signatureOf(wire));
    const landed = await status(chain.node.url, signatureOf(wire));
    expect(landed).toMatchObject({ err: null });
    // Slots from the first receipt (by any endpoint of the chain) to landing: the 5 the plain endpoint lost.
    expect(landed.slot - chain.node.receivedSlot(signatureOf(wire))!).toBe(5);
    expect(staked.faults.snapshot()).toMatchObject({ forwardShare: 1, forwarded: 1, dropped: 0 });
  });

  it('forwardShare 0.1 forwards about a tenth of the sends, drawn from the seeded PRNG', async () => {
    chain.node.faults.set({ seed: 7, forwardShare: 0.1 });
    const payer = fundedKeypair(chain.node);
    for (let i = 0; i < 200; i++) await sendWire(chain.node.url, await signedWire(chain.connection, [pay(payer)], [payer]), true);
    const { forwarded, dropped } = chain.node.faults.snapshot();
    expect(forwarded + dropped).toBe(200);
    expect(forwarded).toBeGreaterThan(5);
    expect(forwarded).toBeLessThan(40);
  });

  it('requireTip: the staked port refuses a transaction without the tip, takes one with it', async () => {
    const payer = fundedKeypair(chain.node);
    const tipAccount = Keypair.generate().publicKey;
    chain.node.airdrop(tipAccount, 1_000_000_000);
    const staked = await chain.node.addEndpoint();
    staked.faults.set({ requireTip: { account: tipAccount.toBase58(), lamports: 5_000 } });
    const untipped = await signedWire(chain.connection, [pay(payer)], [payer]);
    const refused = await sendWire(staked.url, untipped, true);
    expect(refused.body.error).toMatchObject({
      code: -32602,
      message: `Invalid params: the transaction must transfer at least 5000 lamports to the tip account ${tipAccount.toBase58()}`,
    });
    const small = SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: tipAccount, lamports: 4_999 });
    expect((await sendWire(staked.url, await signedWire(chain.connection, [pay(payer), small], [payer]), true)).body.error).toBeDefined();
    const tip = SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: tipAccount, lamports: 5_000 });
    const tipped = await signedWire(chain.connection, [pay(payer), tip], [payer]);
    expect((await sendWire(staked.url, tipped, true)).body.result).toBe(signatureOf(tipped));
    expect(() => chain.node.faults.set({ requireTip: { account: 'nope', lamports: 1 } } as never)).toThrow(
      /faults.requireTip.account: must be a base58 public key/,
    );
  });
});
