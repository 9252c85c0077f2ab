import { ComputeBudgetProgram, Keypair, PublicKey, SystemProgram, Transaction, type TransactionInstruction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  advanceLeaseInstructions,
  isLeaseOperation,
  leaseAddress,
  movesLeaseFrom,
  releaseLeaseInstructions,
  takeLeaseInstructions,
} from '../../src/chain/lease-account.js';
import { agreedLease, type EndpointLease } from '../../src/chain/client/read/lease-evidence.js';

/**
 * The lease's transactions recognised exactly (docs/chain-client.md "The lease"): a message is a
 * lease operation only when every instruction is a compute budget's or one of the lease's own
 * shapes on the lease account; anything else the key signed is judged as any transaction. And
 * what counts as two endpoints agreeing.
 */

const authority = Keypair.generate().publicKey;
const lease = leaseAddress(authority, 7);
const mark = Keypair.generate().publicKey;
const thief = Keypair.generate().publicKey;
const BLOCKHASH = Keypair.generate().publicKey.toBase58();

function message(instructions: TransactionInstruction[], blockhash = BLOCKHASH): Uint8Array {
  return new Transaction({ feePayer: authority, blockhash, lastValidBlockHeight: 0 }).add(...instructions).serializeMessage();
}

const budget = [ComputeBudgetProgram.setComputeUnitLimit({ units: 1_000 }), ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 5 })];

describe('lease operations, recognised exactly', () => {
  it("the lease's own transactions are lease operations, with their budget and mark", () => {
    expect(isLeaseOperation(message([...takeLeaseInstructions(authority, 7, mark), ...budget]), lease, authority)).toBe(true);
    expect(isLeaseOperation(message([...advanceLeaseInstructions(authority, 7, mark), ...budget]), lease, authority)).toBe(true);
    expect(isLeaseOperation(message([...releaseLeaseInstructions(authority, 7, 1_447_680), ...budget]), lease, authority)).toBe(true);
  });

  it('a transfer out of the authority that lists the lease as an extra account is not one', () => {
    const transfer = SystemProgram.transfer({ fromPubkey: authority, toPubkey: thief, lamports: 5_000_000_000 });
    const listing = { ...transfer, keys: [...transfer.keys, { pubkey: lease, isSigner: false, isWritable: false }] } as TransactionInstruction;
    expect(isLeaseOperation(message([listing]), lease, authority)).toBe(false);
    // Nor beside a genuine lease instruction.
    expect(isLeaseOperation(message([...advanceLeaseInstructions(authority, 7, mark), transfer]), lease, authority)).toBe(false);
  });

  it('a withdrawal from the lease to anyone but the authority, or an instruction on another account, is not one', () => {
    const toThief = SystemProgram.nonceWithdraw({ noncePubkey: lease, authorizedPubkey: authority, toPubkey: thief, lamports: 1 });
    expect(isLeaseOperation(message([toThief]), lease, authority)).toBe(false);
    const otherNonce = SystemProgram.nonceAdvance({ noncePubkey: thief, authorizedPubkey: authority });
    expect(isLeaseOperation(message([otherNonce]), lease, authority)).toBe(false);
    expect(isLeaseOperation(message([...budget]), lease, authority)).toBe(false);
    expect(isLeaseOperation(new Uint8Array([1, 2, 3]), lease, authority)).toBe(false);
  });

  it('a take-over moves the lease from the value it was signed against, and from no other', () => {
    const value = Keypair.generate().publicKey.toBase58();
    const over = message(advanceLeaseInstructions(authority, 7, mark), value);
    expect(movesLeaseFrom(over, lease, authority, value)).toBe(true);
    expect(movesLeaseFrom(over, lease, authority, BLOCKHASH)).toBe(false);
    // A withdrawal is not a move from a value: it carries a recent blockhash.
    expect(movesLeaseFrom(message(releaseLeaseInstructions(authority, 7, 1), value), lease, authority, value)).toBe(false);
  });

  it('two instances never sign the same bytes: their marks differ', () => {
    const other = Keypair.generate().publicKey;
    expect(message(advanceLeaseInstructions(authority, 7, mark))).not.toEqual(message(advanceLeaseInstructions(authority, 7, other)));
    expect(message(takeLeaseInstructions(authority, 7, mark))).not.toEqual(message(takeLeaseInstructions(authority, 7, other)));
  });
});

describe('two endpoints agreeing on the lease', () => {
  const held = (value: string, endpoint: string, slot = 10): EndpointLease => ({ state: 'held', value, lamports: 1, slot, endpoint });
  const any = () => true;

  it('two endpoints with one answer agree; one endpoint twice, or two that differ, do not', () => {
    expect(agreedLease([held('A', 'one'), held('A', 'two', 12)], any, false)).toMatchObject({ value: 'A', slot: 12 });
    expect(agreedLease([held('A', 'one'), held('A', 'one')], any, false)).toBeUndefined();
    expect(agreedLease([held('A', 'one'), held('B', 'two')], any, false)).toBeUndefined();
    expect(
      agreedLease(
        [held('A', 'one'), { state: 'free', lamports: 0, slot: 11, endpoint: 'two' }, { state: 'free', lamports: 0, slot: 12, endpoint: 'three' }],
        any,
        false,
      ),
    ).toMatchObject({ state: 'free' });
  });

  it('only states the caller accepts count; with one endpoint configured its single answer is all there is', () => {
    expect(agreedLease([held('A', 'one'), held('A', 'two')], (view) => view.state !== 'held' || view.value !== 'A', false)).toBeUndefined();
    expect(agreedLease([held('A', 'one')], any, true)).toMatchObject({ value: 'A' });
    expect(agreedLease([held('A', 'one')], any, false)).toBeUndefined();
  });
});

it("the lease address is the System program's createWithSeed derivation from the authority and the source chain", async () => {
  expect(leaseAddress(authority, 7).equals(await PublicKey.createWithSeed(authority, 'bridge-lease-7', SystemProgram.programId))).toBe(true);
});
