import type { InstructionOf } from '../../src/chain/codec/instructions.js';
import { accountAt, signerAt, type InstructionContext } from './context.js';
import { ProgramError } from './errors.js';
import { loadTracker, readWithdrawEntry, saveHeader, writeDepositEntry, writeWithdrawEntry } from './tracker.js';

/** What users send: `deposit` on the source, `withdraw` (the claim) on the destination. */

export function deposit(ctx: InstructionContext, ix: InstructionOf<'deposit'>): void {
  const depositor = signerAt(ctx, 0, 'depositor');
  const tracker = loadTracker(ctx, 1, 'DepositTracker');
  const { header } = tracker;
  if (ix.amount === 0n) throw new ProgramError('InvalidAmount', 'deposit amount must be greater than 0');
  if (header.entryCount >= header.capacity) {
    throw new ProgramError('TrackerFull', `DepositTracker ${tracker.address} holds its capacity of ${header.capacity} entries`);
  }
  const index = header.entryCount;
  writeDepositEntry(ctx, tracker, index, {
    amount: ix.amount,
    depositor: depositor.address,
    recipient: ix.recipient,
    sourceMint: ix.sourceMint,
    status: 'Initialized',
    cleanupCompleted: false,
    yesVotes: 0,
    noVotes: 0,
    proposed: { kind: 'None' },
    result: { kind: 'None' },
    refundedAmount: 0n,
    depositSlot: ctx.slot,
  });
  header.entryCount = index + 1n;
  saveHeader(ctx, tracker);
  ctx.log(`Program log: deposit ${index}: ${ix.amount} of ${ix.sourceMint}`);
}

export function withdraw(ctx: InstructionContext, ix: InstructionOf<'withdraw'>): void {
  signerAt(ctx, 0, 'signer');
  const tracker = loadTracker(ctx, 1, 'WithdrawTracker');
  const tokenAccount = accountAt(ctx, 2, 'token account');
  if (ix.index >= tracker.header.entryCount) {
    throw new ProgramError('NotWithdrawable', `index ${ix.index} is at or past entry_count ${tracker.header.entryCount}`);
  }
  const entry = readWithdrawEntry(ctx, tracker, ix.index);
  if (entry.status !== 'Finalized' || entry.result.kind !== 'Confirmed' || entry.createdTokenAccount !== 'Pending') {
    throw new ProgramError(
      'NotWithdrawable',
      `entry ${ix.index} is ${entry.status} with result ${entry.result.kind} and token account ${entry.createdTokenAccount}; only Finalized, Confirmed and Pending is withdrawable`,
    );
  }
  writeWithdrawEntry(ctx, tracker, ix.index, {
    ...entry,
    createdTokenAccount: 'Created',
    tokenAccount: tokenAccount.address,
  });
  ctx.log(`Program log: withdraw ${ix.index}: token account ${tokenAccount.address}`);
}
