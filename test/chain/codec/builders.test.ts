import { Keypair, PublicKey, type TransactionInstruction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { ackDepositInstruction, ackWithdrawInstruction, cleanupDepositInstruction } from '../../../src/chain/codec/builders.js';
import {
  depositInstruction,
  initializeTrackerInstruction,
  resetPendingInstruction,
  setTokenPairInstruction,
  withdrawInstruction,
} from '../../../devnet/instructions.js';
import { DEFAULT_PROGRAM_ID } from '../../../src/chain/codec/layout.js';
import { decodeInstructionData } from '../../../src/chain/codec/instructions.js';
import { key } from './hand-bytes.js';

const programId = new PublicKey(DEFAULT_PROGRAM_ID);
const [a, b, c] = [Keypair.generate().publicKey, Keypair.generate().publicKey, Keypair.generate().publicKey];

type Flags = [PublicKey, 'signer' | 'writable' | 'readonly'];

function expectAccounts(ix: TransactionInstruction, expected: Flags[]): void {
  expect(ix.programId.equals(programId)).toBe(true);
  expect(ix.keys.map((meta) => [meta.pubkey.toBase58(), meta.isSigner, meta.isWritable])).toEqual(
    expected.map(([pubkey, role]) => [pubkey.toBase58(), role === 'signer', role !== 'readonly']),
  );
}

describe('instruction builders follow PROTOCOL.md account lists', () => {
  it('ack_deposit: authority (signer, writable), WithdrawTracker (writable), TokenPair (read-only)', () => {
    const ix = ackDepositInstruction({
      programId,
      authority: a,
      withdrawTracker: b,
      tokenPair: c,
      index: 4n,
      approve: true,
      amount: 10n,
      recipient: key(1),
      sourceMint: key(2),
    });
    expectAccounts(ix, [
      [a, 'signer'],
      [b, 'writable'],
      [c, 'readonly'],
    ]);
    expect(decodeInstructionData(ix.data)).toEqual({
      name: 'ack_deposit',
      index: 4n,
      approve: true,
      amount: 10n,
      recipient: key(1),
      sourceMint: key(2),
    });
  });

  it('ack_withdraw: authority (signer, writable), DepositTracker (writable)', () => {
    const result = { tag: 1, reason: 0, amount: 3n };
    const ix = ackWithdrawInstruction({ programId, authority: a, depositTracker: b, index: 2n, approve: false, result });
    expectAccounts(ix, [
      [a, 'signer'],
      [b, 'writable'],
    ]);
    expect(decodeInstructionData(ix.data)).toEqual({ name: 'ack_withdraw', index: 2n, approve: false, result });
  });

  it('cleanup_deposit: payer (signer, writable), DepositTracker (writable), depositor (writable)', () => {
    const ix = cleanupDepositInstruction({ programId, payer: a, depositTracker: b, depositor: c, index: 8n });
    expectAccounts(ix, [
      [a, 'signer'],
      [b, 'writable'],
      [c, 'writable'],
    ]);
    expect(decodeInstructionData(ix.data)).toEqual({ name: 'cleanup_deposit', index: 8n });
  });

  it('initialize_deposit_tracker: governance (signer), tracker (writable)', () => {
    const args = { name: 'initialize_deposit_tracker' as const, targetChainId: 2, capacity: 100n, threshold: 1, authorities: [key(5)] };
    const ix = initializeTrackerInstruction({ programId, governance: a, tracker: b, ...args });
    expectAccounts(ix, [
      [a, 'signer'],
      [b, 'writable'],
    ]);
    expect(decodeInstructionData(ix.data)).toEqual(args);
  });

  it('initialize_withdraw_tracker: governance (signer), tracker (writable)', () => {
    const args = { name: 'initialize_withdraw_tracker' as const, sourceChainId: 1, capacity: 100n, threshold: 2, authorities: [key(5), key(6)] };
    const ix = initializeTrackerInstruction({ programId, governance: a, tracker: b, ...args });
    expectAccounts(ix, [
      [a, 'signer'],
      [b, 'writable'],
    ]);
    expect(decodeInstructionData(ix.data)).toEqual(args);
  });

  it('deposit: depositor (signer), tracker (writable)', () => {
    const args = { amount: 77n, recipient: key(3), sourceMint: key(4) };
    const ix = depositInstruction({ programId, depositor: a, depositTracker: b, ...args });
    expectAccounts(ix, [
      [a, 'signer'],
      [b, 'writable'],
    ]);
    expect(decodeInstructionData(ix.data)).toEqual({ name: 'deposit', ...args });
  });

  it('withdraw: signer, tracker (writable), token account (read-only)', () => {
    const ix = withdrawInstruction({ programId, signer: a, withdrawTracker: b, tokenAccount: c, index: 0n });
    expectAccounts(ix, [
      [a, 'signer'],
      [b, 'writable'],
      [c, 'readonly'],
    ]);
    expect(decodeInstructionData(ix.data)).toEqual({ name: 'withdraw', index: 0n });
  });

  it('set_token_pair: governance (signer), tracker (writable), TokenPair (writable)', () => {
    const args = { sourceMint: key(1), targetMint: key(2), frozen: false, limitRemaining: 5n, vaultBalance: 6n };
    const ix = setTokenPairInstruction({ programId, governance: a, withdrawTracker: b, tokenPair: c, ...args });
    expectAccounts(ix, [
      [a, 'signer'],
      [b, 'writable'],
      [c, 'writable'],
    ]);
    expect(decodeInstructionData(ix.data)).toEqual({ name: 'set_token_pair', ...args });
  });

  it('reset_pending: governance (signer), tracker (writable)', () => {
    const ix = resetPendingInstruction({ programId, governance: a, depositTracker: b });
    expectAccounts(ix, [
      [a, 'signer'],
      [b, 'writable'],
    ]);
    expect(decodeInstructionData(ix.data)).toEqual({ name: 'reset_pending' });
  });

  it('produces a Buffer, as web3.js expects for instruction data', () => {
    const ix = resetPendingInstruction({ programId, governance: a, depositTracker: b });
    expect(Buffer.isBuffer(ix.data)).toBe(true);
  });
});
