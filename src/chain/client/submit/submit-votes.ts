import { PublicKey, type TransactionInstruction } from '@solana/web3.js';
import { BridgeError } from '../../../errors.js';
import { resendAfterRefusal } from '../../../failure-policy.js';
import type { Metrics } from '../../../metrics/metrics.js';
import type { AckDepositVote, AckWithdrawVote, LandedTransaction, SubmitReport } from '../../port/bridge-chains.js';
import { ackDepositInstruction, ackWithdrawInstruction } from '../../codec/builders.js';
import { depositResultToArg } from '../../codec/instructions.js';
import { tokenPairAddress } from '../../pda.js';
import { depositResultFromWire, parseU64 } from '../../port/result-wire.js';
import { reconcileVotes } from './reconcile-votes.js';
import { ReadMeter, readTrackerHeader, type TrackerRef } from '../read/tracker-reader.js';
import { sendBatches, type BatchItem, type BudgetedSubmitter } from './send-batches.js';
import { asSubmitFailure, submitFailure, type TransactionJob } from './settle/send-outcome.js';
import { ownNextIndex } from '../../port/authority-position.js';

/**
 * ack_deposit / ack_withdraw: votes in index order, consecutive votes batched into as few
 * transactions as fit, one batch at a time. After any unknown outcome the tracker's
 * `next_index` is read before a new transaction is signed (./reconcile-votes.ts), so a vote
 * never lands twice.
 */

interface VoteSubmitter<V extends { index: number }> extends BudgetedSubmitter {
  metrics: Metrics;
  /** The vote's instruction; throws on a vote that has no on-chain form. `field` names it. */
  instructionFor: (vote: V, field: string) => TransactionInstruction;
}

type PlannedVote = BatchItem;

/** Checks an entry index from JSON-safe input before it becomes a u64 argument. */
export function entryIndexArg(index: number, field: string): bigint {
  if (Number.isSafeInteger(index) && index >= 0) return BigInt(index);
  throw new BridgeError(
    'CHAIN__INVALID_VOTE',
    { field, value: String(index), reason: 'expected an entry index: an integer 0 ..= 2^53-1' },
    { shown: String(index) },
  );
}

/** What both votes carry: the tracker's program, the authority, the entry index and the verdict. */
function voteOn(tracker: TrackerRef, authority: PublicKey, vote: { index: number; approve: boolean }, field: string) {
  return { programId: tracker.programId, authority, index: entryIndexArg(vote.index, `${field}.index`), approve: vote.approve };
}

/** ack_deposit on the destination's WithdrawTracker `tracker`; throws on a vote that has no on-chain form. */
export function ackDepositFor(tracker: TrackerRef, authority: PublicKey) {
  return (vote: AckDepositVote, field: string): TransactionInstruction => {
    const sourceMint = new PublicKey(vote.sourceMint);
    return ackDepositInstruction({
      ...voteOn(tracker, authority, vote, field),
      withdrawTracker: tracker.address,
      tokenPair: tokenPairAddress(tracker.programId, tracker.sourceChainId, sourceMint),
      amount: parseU64(vote.amount, `${field}.amount`),
      recipient: vote.recipient,
      sourceMint: vote.sourceMint,
    });
  };
}

/** ack_withdraw on the source's DepositTracker `tracker`; throws on a vote that has no on-chain form. */
export function ackWithdrawFor(tracker: TrackerRef, authority: PublicKey) {
  return (vote: AckWithdrawVote, field: string): TransactionInstruction =>
    ackWithdrawInstruction({
      ...voteOn(tracker, authority, vote, field),
      depositTracker: tracker.address,
      result: depositResultToArg(depositResultFromWire(vote.result, `${field}.result`)),
    });
}

/** ackDeposits and ackWithdraws (wired in ../create-chain-client.ts): deposits are voted on the destination's tracker, withdrawals on the source's. */
export async function submitVotes<V extends { index: number }>(s: VoteSubmitter<V>, votes: readonly V[], signal: AbortSignal): Promise<SubmitReport> {
  const landed: LandedTransaction[] = [];
  // On chain with an error (fee paid) but no vote recorded: reported, never taken as a landed vote.
  const landedWithError: LandedTransaction[] = [];
  try {
    // Every vote is encoded before anything is sent: a bad vote fails the action up front.
    const planned = votes.map((vote, i) => ({ index: vote.index, instruction: s.instructionFor(vote, `votes[${i}]`) }));
    const settled = await s.sender.settlePending(s.target.action, signal);
    landed.push(...settled.landed);
    landedWithError.push(...settled.landedWithError);
    await sendVotes(s, planned, { landed, landedWithError, mustVerify: settled.hadPending }, signal);
    return { transactions: [...landed, ...landedWithError] };
  } catch (err) {
    throw asSubmitFailure(err, s.target, [...landed, ...landedWithError], signal);
  }
}

async function sendVotes<V extends { index: number }>(
  s: VoteSubmitter<V>,
  votes: readonly PlannedVote[],
  state: { landed: LandedTransaction[]; landedWithError: LandedTransaction[]; mustVerify: boolean },
  signal: AbortSignal,
): Promise<void> {
  const planned = state.mustVerify ? await verifyAgainstTracker(s, votes, state.landed, signal) : [...votes];
  let deferred: BridgeError<'CHAIN__FAILED_TO_SUBMIT'> | undefined;
  await sendBatches(
    s,
    planned,
    {
      landed: (transaction) => {
        state.landed.push(transaction);
      },
      paid: (transaction) => {
        state.landedWithError.push(transaction);
      },
      // The valid votes before a refused one are landed first; the refusal is reported after them.
      failed: (failure, job, queue) => {
        const position = failedPosition(failure, job);
        if (deferred !== undefined || position === undefined || resendAfterRefusal(s.target.action, position) !== 'before_refused') throw failure;
        deferred = failure;
        return queue.slice(0, position);
      },
    },
    signal,
  );
  if (deferred !== undefined) throw deferred;
}

/** Position in the batch of the instruction a program error names (refused, or landed with it). */
function failedPosition(err: BridgeError<'CHAIN__FAILED_TO_SUBMIT'>, job: TransactionJob): number | undefined {
  const { index, programError } = err.context;
  if (index === undefined || programError === undefined) return undefined;
  const position = job.indices.indexOf(index);
  return position < 0 ? undefined : position;
}

async function verifyAgainstTracker<V extends { index: number }>(
  s: VoteSubmitter<V>,
  planned: readonly PlannedVote[],
  landed: readonly LandedTransaction[],
  signal: AbortSignal,
): Promise<PlannedVote[]> {
  const { tracker } = s.target;
  const { header } = await readTrackerHeader(s.rpc, tracker, 'confirmed', new ReadMeter(s.metrics), signal);
  const nextIndex = ownNextIndex(header, s.authority.toBase58(), tracker);
  const decision = reconcileVotes(planned, nextIndex, new Set(landed.flatMap((transaction) => transaction.indices)));
  switch (decision.kind) {
    case 'send':
      return decision.votes;
    case 'unexplained':
      throw submitFailure(s.target, {
        outcome: 'foreign_vote',
        reason:
          `this authority's next_index is ${decision.nextIndex}, past votes at indices ${decision.indices.join(', ')} ` +
          'that no transaction known to this server carried; another process may be signing with this authority key ' +
          '(run one instance per signer); the next cycle reads the tracker again',
      });
    case 'stale':
      // An attempt planned from a fresh read starts at the new position.
      throw submitFailure(s.target, {
        outcome: 'stale_plan',
        reason:
          `the planned votes start at index ${decision.firstIndex} but this authority's next_index is ${decision.nextIndex} ` +
          '(the tracker was rewound, or the plan is stale); plan again from a fresh read',
      });
  }
}
