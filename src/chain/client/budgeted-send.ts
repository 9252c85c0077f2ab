import type { PublicKey, TransactionInstruction } from '@solana/web3.js';
import { BridgeError, isBridgeError } from '../../errors.js';
import type { ChainRpc } from '../rpc/chain-rpc.js';
import { leadingBatchSize } from './batch.js';
import { BUDGET_SIZE_PREFIX, measureBatch } from './compute-budget.js';
import { feeNote, type Bid, type PriorityFeeBidder } from './priority-fee.js';
import type { ActionTarget } from './submit-failure.js';
import type { SignedTransaction, TransactionJob, TransactionSender } from './transaction-sender.js';

/**
 * The next transaction of an action, sized by bytes and by compute, priced and signed; and its
 * send, which tells the bidder whether the price was enough. Shared by ./submit-votes.ts and
 * ./submit-cleanups.ts.
 */

export interface BudgetedSubmitter {
  target: ActionTarget;
  rpc: ChainRpc;
  sender: TransactionSender;
  bidder: PriorityFeeBidder;
  authority: PublicKey;
}

export interface SignedBatch<T> {
  /** The leading items this transaction carries. */
  items: T[];
  signed: SignedTransaction;
  bid: Bid;
}

/** Signs as many of the leading `queue` items as fit one transaction's bytes and compute (at most `maxCount`). */
export async function signNextBatch<T extends { instruction: TransactionInstruction }>(
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
 * raises the chain's escalation step, and its failure names the price offered, what recent slots cleared and the cap; one that
 * landed (with an error or not) counts towards stepping it down.
 */
export async function sendSignedBatch(s: BudgetedSubmitter, batch: SignedBatch<unknown>, job: TransactionJob, signal: AbortSignal): Promise<void> {
  try {
    await s.sender.sendAndConfirm(batch.signed, job, signal);
  } catch (err) {
    if (!isBridgeError(err, 'CHAIN__FAILED_TO_SUBMIT')) throw err;
    if (err.context.outcome === 'landed_with_error') s.bidder.landed();
    if (err.context.outcome !== 'not_landed') throw err;
    // A transaction no node accepted says nothing about its price (an RPC outage, not congestion).
    if (err.context.sendsAccepted !== 0) s.bidder.expired();
    throw new BridgeError('CHAIN__FAILED_TO_SUBMIT', err.context, `${err.message}; ${feeNote(batch.bid)}`, { cause: err.cause });
  }
  s.bidder.landed();
}

/** The send met ComputationalBudgetExceeded: the program costs more than the simulation said. */
export function exceededBudget(err: unknown): err is BridgeError<'CHAIN__FAILED_TO_SUBMIT'> {
  return isBridgeError(err, 'CHAIN__FAILED_TO_SUBMIT') && err.context.transactionError === 'ComputationalBudgetExceeded';
}
