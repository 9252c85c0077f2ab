import type { InstructionOf } from '../../src/chain/codec/instructions.js';
import { accountAt, signerAt, type InstructionContext } from './context.js';
import { ProgramError } from './errors.js';
import { loadTracker, readDepositEntry, saveHeader, writeDepositEntry, type Tracker } from './tracker.js';

/**
 * cleanup_deposit (source, permissionless). The payer and tracker are checked first (nothing can
 * be read without them); then PROTOCOL.md's order: EntryNotFound, InvalidAccount (depositor),
 * EntryNotFinalized, CleanupAlreadyCompleted.
 */
export function cleanupDeposit(ctx: InstructionContext, ix: InstructionOf<'cleanup_deposit'>): void {
  signerAt(ctx, 0, 'payer');
  const tracker = loadTracker(ctx, 1, 'DepositTracker');
  const { header } = tracker;
  if (ix.index >= header.entryCount) {
    throw new ProgramError('EntryNotFound', `index ${ix.index} is at or past entry_count ${header.entryCount}`);
  }
  const entry = readDepositEntry(ctx, tracker, ix.index);
  const depositor = accountAt(ctx, 2, 'depositor');
  if (depositor.address !== entry.depositor) {
    throw new ProgramError('InvalidAccount', `depositor ${depositor.address} is not entry ${ix.index}'s depositor ${entry.depositor}`);
  }
  if (!depositor.isWritable) throw new ProgramError('InvalidAccount', `depositor ${depositor.address} (account #2) must be writable`);
  if (entry.status !== 'Finalized') throw new ProgramError('EntryNotFinalized', `entry ${ix.index} is ${entry.status}, not Finalized`);
  if (entry.cleanupCompleted) throw new ProgramError('CleanupAlreadyCompleted', `entry ${ix.index} is already cleaned up`);
  // Reading a Finalized entry guarantees result is Confirmed or Rejected.
  const refund = entry.result.kind === 'Confirmed' ? entry.amount - entry.result.amount : entry.amount;
  writeDepositEntry(ctx, tracker, ix.index, { ...entry, refundedAmount: refund, cleanupCompleted: true });
  advanceSettledPrefix(ctx, tracker);
  saveHeader(ctx, tracker);
  ctx.log(`Program log: deposit entry ${ix.index} cleaned up: refunded ${refund}`);
}

/** settled_prefix moves past every cleaned-up entry directly above it. */
function advanceSettledPrefix(ctx: InstructionContext, tracker: Tracker): void {
  const { header } = tracker;
  while (header.settledPrefix < header.entryCount && readDepositEntry(ctx, tracker, header.settledPrefix).cleanupCompleted) {
    header.settledPrefix += 1n;
  }
}
