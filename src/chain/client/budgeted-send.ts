import type { PublicKey, TransactionInstruction } from '@solana/web3.js';
import { BridgeError } from '../../errors.js';
import type { ChainSide, CrankAction } from '../../domain.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { LandedTransaction } from '../bridge-chains.js';
import type { ChainRpc } from '../rpc/chain-rpc.js';
import { leadingBatchSize } from './batch.js';
import { BUDGET_SIZE_PREFIX, measureBatch } from './compute-budget.js';
import { feeNote, type Bid, type PriorityFeeBidder } from './priority-fee.js';
import type { ActionTarget } from './submit-failure.js';
import type { TrackerRef } from './tracker-reader.js';
import type { SendOutcome, SignedTransaction, TransactionJob, TransactionSender } from './transaction-sender.js';

/**
 * The one batch-send loop of ./submit-votes.ts and ./submit-cleanups.ts: each transaction of an
 * action sized by bytes and by compute, priced, signed and sent; its outcome tells the bidder
 * whether the price was enough, and the action what to send next.
 */

export interface BudgetedSubmitter {
  target: ActionTarget;
  rpc: ChainRpc;
  sender: TransactionSender;
  bidder: PriorityFeeBidder;
  authority: PublicKey;
}

/** One chain as the actions send on it: its RPC, tracker, sender and fee bidder. */
interface SendingChain {
  rpc: ChainRpc;
  tracker: TrackerRef;
  sender: TransactionSender;
  bidder: PriorityFeeBidder;
}

/** What the crank's actions send with: both chains, the authority (the fee payer) and the metrics. */
export interface ActionChains {
  authority: PublicKey;
  metrics: Metrics;
  source: SendingChain;
  target: SendingChain;
}

/** What every send of `action` on `side` needs: that chain's RPC, sender, bidder and tracker. */
export function submitterOn(chains: ActionChains, side: ChainSide, action: CrankAction): BudgetedSubmitter & { metrics: Metrics } {
  const { rpc, tracker, sender, bidder } = chains[side];
  return { authority: chains.authority, metrics: chains.metrics, rpc, sender, bidder, target: { action, tracker } };
}

interface SignedBatch<T> {
  /** The leading items this transaction carries. */
  items: T[];
  signed: SignedTransaction;
  bid: Bid;
}

/** Signs as many of the leading `queue` items as fit one transaction's bytes and compute (at most `maxCount`). */
async function signNextBatch<T extends { instruction: TransactionInstruction }>(
  s: BudgetedSubmitter,
  queue: readonly T[],
  maxCount: number,
  signal: AbortSignal,
): Promise<SignedBatch<T>> {
  const instructions = queue.map((item) => item.instruction);
  const bySize = instructions.slice(0, leadingBatchSize(instructions, s.authority, undefined, BUDGET_SIZE_PREFIX));
  const bid = await s.bidder.bid(bySize, signal);
  const measured = await measureBatch(
    { rpc: s.rpc, feePayer: s.authority, instructions: bySize, microLamportsPerUnit: bid.microLamportsPerUnit, maxCount },
    signal,
  );
  const items = queue.slice(0, measured.count);
  const signed = await s.sender.sign(bySize.slice(0, measured.count), measured.budget, signal);
  return { items, signed, bid };
}

/**
 * Sends and confirms one signed batch. A transaction that expired after a node accepted it
 * raises the chain's escalation step, and its failure names the price offered, what recent
 * slots cleared and the cap; one that landed (with an error or not) counts towards stepping it down.
 */
async function sendSignedBatch(s: BudgetedSubmitter, batch: SignedBatch<unknown>, job: TransactionJob, signal: AbortSignal): Promise<SendOutcome> {
  const outcome = await s.sender.sendAndConfirm(batch.signed, job, signal);
  if (outcome.kind === 'landed') {
    s.bidder.landed();
    return outcome;
  }
  const err = outcome.failure;
  if (err.context.outcome === 'landed_with_error') s.bidder.landed();
  if (err.context.outcome !== 'not_landed') return outcome;
  // A transaction no node accepted says nothing about its price (an RPC outage, not congestion).
  if (err.context.sendsAccepted !== 0) s.bidder.expired();
  const priced = new BridgeError('CHAIN__FAILED_TO_SUBMIT', err.context, `${err.message}; ${feeNote(batch.bid)}`, { cause: err.cause });
  return { kind: 'failed', failure: priced };
}

/** One item of a batched action: the entry it concerns and its instruction. */
export interface BatchItem {
  index: number;
  instruction: TransactionInstruction;
}

/** What an action does with each batch's outcome. */
export interface BatchOutcomes<T extends BatchItem> {
  landed(transaction: LandedTransaction): void;
  /** On chain with an error (the fee was paid) but nothing it carried took effect. */
  paid(transaction: LandedTransaction): void;
  /**
   * Any other failure of the batch `job`: the queue to go on with (src/failure-policy.ts,
   * `resendAfterRefusal`), or the failure thrown to end the action.
   */
  failed(failure: BridgeError<'CHAIN__FAILED_TO_SUBMIT'>, job: TransactionJob, queue: readonly T[]): T[] | Promise<T[]>;
}

/**
 * Sends `queue` in index order, as many leading items per transaction as fit, one transaction
 * at a time. A transaction that ran out of compute (the program costs more than the simulation
 * measured) is followed by batches half as large, measured again.
 */
export async function sendBatches<T extends BatchItem>(
  s: BudgetedSubmitter,
  items: readonly T[],
  outcomes: BatchOutcomes<T>,
  signal: AbortSignal,
): Promise<void> {
  let queue = [...items];
  let maxCount = queue.length;
  while (queue.length > 0) {
    const next = await signNextBatch(s, queue, maxCount, signal);
    const job: TransactionJob = { ...s.target, indices: next.items.map((item) => item.index) };
    const outcome = await sendSignedBatch(s, next, job, signal);
    if (outcome.kind === 'landed') {
      outcomes.landed({ signature: next.signed.signature, indices: job.indices });
      queue = queue.slice(next.items.length);
      continue;
    }
    const { failure } = outcome;
    if (failure.context.transactionError === 'ComputationalBudgetExceeded' && next.items.length > 1) {
      const { signature } = failure.context;
      if (signature !== undefined) outcomes.paid({ signature, indices: job.indices });
      maxCount = Math.ceil(next.items.length / 2);
      continue;
    }
    queue = await outcomes.failed(failure, job, queue);
  }
}
