import type { TransactionInstruction } from '@solana/web3.js';
import { BridgeError, isBridgeError } from '../../errors.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { LandedTransaction, SubmitReport } from '../bridge-chains.js';
import { exceededBudget, sendSignedBatch, signNextBatch, type BudgetedSubmitter } from './budgeted-send.js';
import { reconcileVotes } from './reconcile-votes.js';
import { asSubmitFailure, submitFailure } from './submit-failure.js';
import { ReadMeter, readTrackerHeader } from './tracker-reader.js';
import type { TransactionJob } from './transaction-sender.js';
import { ownNextIndex } from '../authority-position.js';

/**
 * ack_deposit / ack_withdraw: votes in index order, consecutive votes batched into as few
 * transactions as fit, one batch at a time. After any unknown outcome the tracker's
 * `next_index` is read before a new transaction is signed (./reconcile-votes.ts), so a vote
 * never lands twice.
 */

export interface VoteSubmitter<V extends { index: number }> extends BudgetedSubmitter {
  metrics: Metrics;
  /** The vote's instruction; throws on a vote that has no on-chain form. `field` names it. */
  instructionFor: (vote: V, field: string) => TransactionInstruction;
}

interface PlannedVote {
  index: number;
  instruction: TransactionInstruction;
}

/** Checks an entry index from JSON-safe input before it becomes a u64 argument. */
export function entryIndexArg(index: number, field: string): bigint {
  if (Number.isSafeInteger(index) && index >= 0) return BigInt(index);
  throw new BridgeError(
    'CHAIN__INVALID_VOTE',
    { field, value: String(index), reason: 'expected an entry index: an integer 0 ..= 2^53-1' },
    `${field} is ${String(index)}, expected an entry index: an integer 0 ..= 2^53-1`,
  );
}

export async function submitVotes<V extends { index: number }>(
  s: VoteSubmitter<V>,
  votes: readonly V[],
  signal: AbortSignal,
): Promise<SubmitReport> {
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
  let planned = [...votes];
  let deferred: unknown;
  let maxCount = planned.length;
  if (state.mustVerify) planned = await verifyAgainstTracker(s, planned, state.landed, signal);
  while (planned.length > 0) {
    const next = await signNextBatch(s, planned, maxCount, signal);
    const { items: batch, signed } = next;
    const job: TransactionJob = { ...s.target, indices: batch.map((vote) => vote.index) };
    try {
      await sendSignedBatch(s, next, job, signal);
    } catch (err) {
      // The program costs more than the simulation measured: send half as many, measured again.
      if (exceededBudget(err) && batch.length > 1) {
        const { signature } = err.context;
        if (signature !== undefined) state.landedWithError.push({ signature, indices: job.indices });
        maxCount = Math.ceil(batch.length / 2);
        continue;
      }
      // All or nothing: the votes before a rejected one did not land, but they were valid. Land
      // them, then report the rejection.
      const failedAt = failedPosition(err, job);
      if (deferred !== undefined || failedAt === undefined || failedAt === 0) throw err;
      deferred = err;
      planned = batch.slice(0, failedAt);
      continue;
    }
    state.landed.push({ signature: signed.signature, indices: job.indices });
    planned = planned.slice(batch.length);
  }
  if (deferred !== undefined) throw deferred;
}

/** Position in the batch of the instruction a program error names (refused, or landed with it). */
function failedPosition(err: unknown, job: TransactionJob): number | undefined {
  if (!isBridgeError(err, 'CHAIN__FAILED_TO_SUBMIT')) return undefined;
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
