import { Keypair, PACKET_DATA_SIZE, PublicKey, Transaction, TransactionInstruction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { leadingBatchSize, packBatches, transactionSize } from '../../../../../src/chain/client/submit/build/batch.js';
import { ackDepositInstruction, ackWithdrawInstruction, cleanupDepositInstruction } from '../../../../../src/chain/codec/builders.js';
import { DEFAULT_PROGRAM_ID } from '../../../../../src/chain/codec/layout.js';
import { depositTrackerAddress, tokenPairAddress, withdrawTrackerAddress } from '../../../../../src/chain/pda.js';

const programId = new PublicKey(DEFAULT_PROGRAM_ID);
const authority = Keypair.fromSeed(new Uint8Array(32).fill(7));
const withdrawTracker = withdrawTrackerAddress(programId, 1);
const depositTracker = depositTrackerAddress(programId, 2);
const mints = Array.from({ length: 40 }, (_, i) => Keypair.fromSeed(new Uint8Array(32).fill(100 + i)).publicKey);

function ackDeposit(index: number, mint: PublicKey): TransactionInstruction {
  return ackDepositInstruction({
    programId,
    authority: authority.publicKey,
    withdrawTracker,
    tokenPair: tokenPairAddress(programId, 1, mint),
    index: BigInt(index),
    approve: true,
    amount: 1_000_000n + BigInt(index),
    recipient: mints[(index + 1) % mints.length]!.toBase58(),
    sourceMint: mint.toBase58(),
  });
}

function ackWithdraw(index: number): TransactionInstruction {
  return ackWithdrawInstruction({
    programId,
    authority: authority.publicKey,
    depositTracker,
    index: BigInt(index),
    approve: true,
    result: { tag: 1, reason: 0, amount: 5n },
  });
}

function cleanup(index: number, depositor: PublicKey): TransactionInstruction {
  return cleanupDepositInstruction({ programId, payer: authority.publicKey, depositTracker, depositor, index: BigInt(index) });
}

/** The real wire size: sign with a real key and blockhash, serialize with every check on. */
function signedSize(instructions: TransactionInstruction[]): number {
  const transaction = new Transaction({ feePayer: authority.publicKey, blockhash: mints[0]!.toBase58(), lastValidBlockHeight: 1 });
  transaction.add(...instructions).sign(authority);
  return transaction.serialize().length;
}

function expectMaximalBatches(instructions: TransactionInstruction[], batches: TransactionInstruction[][]): void {
  expect(batches.flat()).toEqual(instructions);
  batches.forEach((batch, i) => {
    expect(transactionSize(batch, authority.publicKey)).toBeLessThanOrEqual(PACKET_DATA_SIZE);
    const next = batches[i + 1]?.[0];
    if (next !== undefined) expect(transactionSize([...batch, next], authority.publicKey)).toBeGreaterThan(PACKET_DATA_SIZE);
  });
}

describe('transactionSize', () => {
  it.each([
    ['one ack_deposit', [ackDeposit(0, mints[0]!)]],
    ['ack_deposits sharing a token pair', Array.from({ length: 9 }, (_, i) => ackDeposit(i, mints[0]!))],
    ['ack_deposits with distinct token pairs', Array.from({ length: 6 }, (_, i) => ackDeposit(i, mints[i]!))],
    ['ack_withdraws', Array.from({ length: 20 }, (_, i) => ackWithdraw(i))],
    ['cleanups with distinct depositors', Array.from({ length: 12 }, (_, i) => cleanup(i, mints[i]!))],
  ])('equals the signed wire size: %s', (_name, instructions) => {
    expect(transactionSize(instructions, authority.publicKey)).toBe(signedSize(instructions));
  });

  it('counts sizes far above the limit exactly, where web3.js cannot even serialize the message', () => {
    const small = new TransactionInstruction({ programId, keys: [], data: Buffer.alloc(100) });
    const huge = new TransactionInstruction({ programId, keys: [], data: Buffer.alloc(PACKET_DATA_SIZE + 10) });
    // 1,242 data bytes take a 2-byte length prefix where 100 take 1.
    expect(transactionSize([huge], authority.publicKey)).toBe(signedSize([small]) + (PACKET_DATA_SIZE + 10 - 100) + 1);
  });

  it("counts a second signer among the instructions' accounts", () => {
    const cosigner = Keypair.fromSeed(new Uint8Array(32).fill(9));
    const instruction = new TransactionInstruction({
      programId,
      keys: [{ pubkey: cosigner.publicKey, isSigner: true, isWritable: false }],
      data: Buffer.alloc(4),
    });
    const transaction = new Transaction({ feePayer: authority.publicKey, blockhash: mints[0]!.toBase58(), lastValidBlockHeight: 1 }).add(instruction);
    transaction.sign(authority, cosigner);
    expect(transactionSize([instruction], authority.publicKey)).toBe(transaction.serialize().length);
  });
});

describe('packBatches: as many consecutive instructions per transaction as fit 1232 bytes', () => {
  it('packs ack_deposit votes sharing one token pair', () => {
    const instructions = Array.from({ length: 50 }, (_, i) => ackDeposit(i, mints[0]!));
    const batches = packBatches(instructions, authority.publicKey);
    expectMaximalBatches(instructions, batches);
    expect(batches.length).toBeGreaterThan(1);
  });

  it('fits fewer ack_deposit votes when each names another token pair (more account keys)', () => {
    const shared = packBatches(
      Array.from({ length: 30 }, (_, i) => ackDeposit(i, mints[0]!)),
      authority.publicKey,
    );
    const distinctInstructions = Array.from({ length: 30 }, (_, i) => ackDeposit(i, mints[i]!));
    const distinct = packBatches(distinctInstructions, authority.publicKey);
    expectMaximalBatches(distinctInstructions, distinct);
    expect(distinct[0]!.length).toBeLessThan(shared[0]!.length);
  });

  it('packs ack_withdraw votes and cleanups', () => {
    const votes = Array.from({ length: 100 }, (_, i) => ackWithdraw(i));
    expectMaximalBatches(votes, packBatches(votes, authority.publicKey));
    const cleanups = Array.from({ length: 60 }, (_, i) => cleanup(i, mints[i % 40]!));
    expectMaximalBatches(cleanups, packBatches(cleanups, authority.publicKey));
  });

  it('returns no batch for no instructions, and one batch when everything fits', () => {
    expect(packBatches([], authority.publicKey)).toEqual([]);
    const two = [ackWithdraw(0), ackWithdraw(1)];
    expect(packBatches(two, authority.publicKey)).toEqual([two]);
  });

  it('honours a smaller limit exactly at the boundary', () => {
    const instructions = Array.from({ length: 5 }, (_, i) => ackWithdraw(i));
    const threeFit = transactionSize(instructions.slice(0, 3), authority.publicKey);
    expect(leadingBatchSize(instructions, authority.publicKey, threeFit)).toBe(3);
    expect(leadingBatchSize(instructions, authority.publicKey, threeFit - 1)).toBe(2);
  });

  it('throws when one instruction alone does not fit', () => {
    const big = new TransactionInstruction({ programId, keys: [], data: Buffer.alloc(1100) });
    expect(() => leadingBatchSize([big], authority.publicKey)).toThrow(
      /one instruction alone makes a \d+-byte transaction, above the 1232-byte limit/,
    );
  });
});
