import { PublicKey } from '@solana/web3.js';
import type { InstructionOf } from '../../src/chain/codec/instructions.js';
import { tokenPairAddress } from '../../src/chain/pda.js';
import type { WithdrawEntry } from '../../src/chain/types.js';
import { accountAt, signerAt, type InstructionContext } from './context.js';
import { ProgramError } from './errors.js';
import { describeResult } from './results.js';
import { settleWithTokenPair } from './token-pair-result.js';
import { loadTracker, readWithdrawEntry, saveHeader, writeWithdrawEntry, zeroEntries, type Tracker } from './tracker.js';
import { hasThresholdNo, hasThresholdYes, recordVote, rewindPositions, votingSlot } from './votes.js';

type AckDeposit = InstructionOf<'ack_deposit'>;

/**
 * ack_deposit (destination): proposal, votes, ordered finalization with cascade, threshold no.
 * Finalized entries always form the prefix `0 .. settled_prefix`: an entry finalizes only at
 * `settled_prefix`, and the cascade walks forward from there.
 */
export function ackDeposit(ctx: InstructionContext, ix: AckDeposit): void {
  const authority = signerAt(ctx, 0, 'authority');
  const tracker = loadTracker(ctx, 1, 'WithdrawTracker');
  checkTokenPairAccount(ctx, tracker, ix);
  const { header } = tracker;
  const slot = votingSlot(header, authority.address, ix.index);
  const entry = ix.index === header.entryCount ? propose(tracker, ix) : vote(ctx, tracker, ix);
  const late = entry.status === 'Finalized';
  recordVote(header, entry, slot, ix.index, ix.approve);
  writeWithdrawEntry(ctx, tracker, ix.index, entry);
  if (!late) resolve(ctx, tracker, ix.index, entry);
  saveHeader(ctx, tracker);
}

function checkTokenPairAccount(ctx: InstructionContext, tracker: Tracker, ix: AckDeposit): void {
  const tokenPair = accountAt(ctx, 2, 'token pair');
  if (!ix.approve) return;
  const expected = tokenPairAddress(ctx.programId, tracker.header.sourceChainId, new PublicKey(ix.sourceMint)).toBase58();
  if (tokenPair.address !== expected) {
    throw new ProgramError('InvalidAccount', `token pair ${tokenPair.address} is not the TokenPair PDA ${expected} of source_mint ${ix.sourceMint}`);
  }
}

function propose(tracker: Tracker, ix: AckDeposit): WithdrawEntry {
  const { header } = tracker;
  if (!ix.approve) throw new ProgramError('InvalidVote', `index ${ix.index} is a proposal (entry_count), which must approve`);
  if (header.entryCount >= header.capacity) {
    throw new ProgramError('TrackerFull', `WithdrawTracker ${tracker.address} holds its capacity of ${header.capacity} entries`);
  }
  header.entryCount += 1n;
  return {
    status: 'Voting',
    createdTokenAccount: 'Pending',
    yesVotes: 0,
    noVotes: 0,
    amount: ix.amount,
    recipient: ix.recipient,
    sourceMint: ix.sourceMint,
    result: { kind: 'None' },
    tokenAccount: PublicKey.default.toBase58(),
    finalizedSlot: 0n,
  };
}

function vote(ctx: InstructionContext, tracker: Tracker, ix: AckDeposit): WithdrawEntry {
  const entry = readWithdrawEntry(ctx, tracker, ix.index);
  const matches = entry.amount === ix.amount && entry.recipient === ix.recipient && entry.sourceMint === ix.sourceMint;
  if (ix.approve && !matches) {
    throw new ProgramError(
      'VoteMismatch',
      `yes vote on entry ${ix.index} carries (${ix.amount}, ${ix.recipient}, ${ix.sourceMint}), the proposal is (${entry.amount}, ${entry.recipient}, ${entry.sourceMint})`,
    );
  }
  return entry;
}

function resolve(ctx: InstructionContext, tracker: Tracker, index: bigint, entry: WithdrawEntry): void {
  const { header } = tracker;
  if (hasThresholdYes(header, entry.yesVotes)) {
    if (header.settledPrefix === index) finalizeFrom(ctx, tracker, index, entry);
    return;
  }
  if (hasThresholdNo(header, entry.noVotes)) removeFrom(ctx, tracker, index);
}

/** Finalizes `index`, then every following entry that already holds a threshold yes (cascade). */
function finalizeFrom(ctx: InstructionContext, tracker: Tracker, index: bigint, entry: WithdrawEntry): void {
  const { header } = tracker;
  let current: WithdrawEntry | undefined = entry;
  let position = index;
  while (current !== undefined) {
    finalize(ctx, tracker, position, current);
    position += 1n;
    header.settledPrefix = position;
    current = position < header.entryCount ? readWithdrawEntry(ctx, tracker, position) : undefined;
    if (current !== undefined && !hasThresholdYes(header, current.yesVotes)) current = undefined;
  }
}

function finalize(ctx: InstructionContext, tracker: Tracker, index: bigint, entry: WithdrawEntry): void {
  const result = settleWithTokenPair(ctx, tracker.header.sourceChainId, entry);
  writeWithdrawEntry(ctx, tracker, index, {
    ...entry,
    status: 'Finalized',
    result,
    createdTokenAccount: result.kind === 'Confirmed' ? 'Pending' : 'NotRequired',
    finalizedSlot: ctx.slot,
  });
  ctx.log(`Program log: withdraw entry ${index} finalized: ${describeResult(result)}`);
}

/** Threshold no: `index` and every later entry (none is finalized) are removed. */
function removeFrom(ctx: InstructionContext, tracker: Tracker, index: bigint): void {
  const { header } = tracker;
  zeroEntries(ctx, tracker, index, header.entryCount);
  header.entryCount = index;
  rewindPositions(header, index);
  ctx.log(`Program log: threshold no on withdraw entry ${index}: entries from ${index} removed`);
}
