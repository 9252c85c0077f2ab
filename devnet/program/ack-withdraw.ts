import { depositResultFromArg, type InstructionOf } from '../../src/chain/codec/instructions.js';
import type { DepositEntry, DepositResult } from '../../src/chain/types.js';
import { signerAt, type InstructionContext } from './context.js';
import { describeResult, sameResult } from './results.js';
import { ProgramError } from './errors.js';
import { loadTracker, readDepositEntry, saveHeader, writeDepositEntry, type Tracker } from './tracker.js';
import { hasThresholdNo, hasThresholdYes, recordVote, rewindPositions, votingSlot } from './votes.js';

type AckWithdraw = InstructionOf<'ack_withdraw'>;

/** ack_withdraw (source): relays the destination result; finalization has no ordering constraint. */
export function ackWithdraw(ctx: InstructionContext, ix: AckWithdraw): void {
  const authority = signerAt(ctx, 0, 'authority');
  const tracker = loadTracker(ctx, 1, 'DepositTracker');
  const { header } = tracker;
  const slot = votingSlot(header, authority.address, ix.index);
  if (ix.index >= header.entryCount) {
    throw new ProgramError('EntryNotFound', `index ${ix.index} is at or past entry_count ${header.entryCount}`);
  }
  const entry = readDepositEntry(ctx, tracker, ix.index);
  const result = validResult(ix, entry);
  const late = entry.status === 'Finalized';
  if (entry.status === 'Initialized') {
    if (!ix.approve) throw new ProgramError('InvalidVote', `entry ${ix.index} is Initialized: the first vote is a proposal, which must approve`);
    entry.status = 'Relaying';
    entry.proposed = result;
  } else if (ix.approve && !sameResult(result, entry.proposed)) {
    throw new ProgramError(
      'VoteMismatch',
      `yes vote on entry ${ix.index} carries ${describeResult(result)}, the proposal is ${describeResult(entry.proposed)}`,
    );
  }
  recordVote(header, entry, slot, ix.index, ix.approve);
  writeDepositEntry(ctx, tracker, ix.index, entry);
  if (!late) resolve(ctx, tracker, ix.index, entry);
  saveHeader(ctx, tracker);
}

function validResult(ix: AckWithdraw, entry: DepositEntry): DepositResult {
  const result = depositResultFromArg(ix.result);
  if (result === undefined) {
    const { tag, reason, amount } = ix.result;
    throw new ProgramError('InvalidResult', `result (tag ${tag}, reason ${reason}, amount ${amount}) is not a valid Confirmed or Rejected`);
  }
  if (result.kind === 'Confirmed' && result.amount > entry.amount) {
    throw new ProgramError('InvalidResult', `Confirmed amount ${result.amount} is above entry ${ix.index}'s amount ${entry.amount}`);
  }
  return result;
}

function resolve(ctx: InstructionContext, tracker: Tracker, index: bigint, entry: DepositEntry): void {
  const { header } = tracker;
  if (hasThresholdYes(header, entry.yesVotes)) {
    writeDepositEntry(ctx, tracker, index, { ...entry, status: 'Finalized', result: entry.proposed });
    ctx.log(`Program log: deposit entry ${index} finalized: ${describeResult(entry.proposed)}`);
    return;
  }
  if (hasThresholdNo(header, entry.noVotes)) {
    resetFrom(ctx, tracker, index);
    rewindPositions(header, index);
    ctx.log(`Program log: threshold no on deposit entry ${index}: entries from ${index} back to Initialized`);
  }
}

/** Every non-finalized entry from `index` on returns to Initialized; deposit data is kept. */
export function resetFrom(ctx: InstructionContext, tracker: Tracker, index: bigint): bigint | undefined {
  let lowest: bigint | undefined;
  for (let i = index; i < tracker.header.entryCount; i += 1n) {
    const entry = readDepositEntry(ctx, tracker, i);
    if (entry.status !== 'Relaying') continue;
    writeDepositEntry(ctx, tracker, i, { ...entry, status: 'Initialized', yesVotes: 0, noVotes: 0, proposed: { kind: 'None' } });
    lowest ??= i;
  }
  return lowest;
}
