import type { PublicKey, TransactionInstruction } from '@solana/web3.js';
import { BridgeError } from '../../../errors.js';
import type { LandedTransaction } from '../../port/bridge-chains.js';
import type { ChainRpc } from '../../rpc/chain-rpc.js';
import { learnFromLanding, LOADED_ACCOUNTS_EXCEEDED, type ComputeCeilings } from '../budget/compute-budget.js';
import type { LoadedAccounts } from '../budget/loaded-accounts.js';
import { feeNote, type PriorityFeeBidder } from '../budget/priority-fee.js';
import { signNextBatch, type SignedBatch } from './build/sign-transaction.js';
import type { Reprice } from './settle/lifetime.js';
import { failedWith, type ActionTarget, type SendOutcome, type TransactionJob } from './settle/send-outcome.js';
import type { TransactionSender } from './transaction-sender.js';

/**
 * The one batch-send loop of every action (./submit-votes.ts, ./submit-cleanups.ts): each
 * transaction sized, priced and signed once (./build/sign-transaction.ts), sent and watched by the
 * chain's sender (./transaction-sender.ts); what became of it tells the fee bidder whether the
 * price was enough, and the action what to send next. Whether anything is tried again is
 * src/failure-policy.ts's decision.
 */

export interface BudgetedSubmitter {
  target: ActionTarget;
  rpc: ChainRpc;
  sender: TransactionSender;
  bidder: PriorityFeeBidder;
  /** The chain's: what its landed and refused transactions showed each action's instructions cost. */
  ceilings: ComputeCeilings;
  /** The chain's: what its accounts load, for SetLoadedAccountsDataSizeLimit. */
  loaded: LoadedAccounts;
  authority: PublicKey;
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
 * measured) is followed by batches half as large, measured again. One that loaded more account
 * data than its limit (refused, or landed fee-only as SIMD-0191 has it: an account grew after
 * the measurement) is measured and signed again once, under the 64 MiB default
 * (../budget/loaded-accounts.ts re-reads the programs next cycle).
 */
export async function sendBatches<T extends BatchItem>(
  s: BudgetedSubmitter,
  items: readonly T[],
  outcomes: BatchOutcomes<T>,
  signal: AbortSignal,
): Promise<void> {
  let queue = [...items];
  let maxCount = queue.length;
  let resized = false;
  while (queue.length > 0) {
    const next = await signNextBatch(s, queue, maxCount, signal);
    const job: TransactionJob = { ...s.target, indices: next.items.map((item) => item.index) };
    const outcome =
      'refusal' in next
        ? failedWith(job, next.refusal, { outcome: 'refused', where: 'refused in simulation', leading: next.leading })
        : await sendSignedBatch(s, next, job, signal);
    if (outcome.kind === 'landed') {
      outcomes.landed({ signature: outcome.signature, indices: job.indices });
      queue = queue.slice(next.items.length);
      resized = false;
      continue;
    }
    const { failure } = outcome;
    if (failure.context.transactionError === LOADED_ACCOUNTS_EXCEEDED && !resized) {
      resized = true;
      const { signature } = failure.context;
      if (signature !== undefined && failure.context.outcome === 'landed_with_error') outcomes.paid({ signature, indices: job.indices });
      continue;
    }
    if (failure.context.transactionError === 'ComputationalBudgetExceeded' && next.items.length > 1) {
      const { signature } = failure.context;
      if (signature !== undefined) outcomes.paid({ signature, indices: job.indices });
      maxCount = Math.ceil(next.items.length / 2);
      continue;
    }
    queue = await outcomes.failed(failure, job, queue);
  }
}

/**
 * Sends and confirms one signed batch. A transaction that expired after a node accepted it
 * raises the chain's escalation step (when its lifetime says an expiry means outbid), and its
 * failure names the price offered, what recent slots cleared and the cap; one that landed (with
 * an error or not) counts towards stepping it down. What the chain showed of the instructions'
 * cost moves the compute ceiling.
 */
async function sendSignedBatch(s: BudgetedSubmitter, batch: SignedBatch<BatchItem>, job: TransactionJob, signal: AbortSignal): Promise<SendOutcome> {
  const outcome = await s.sender.sendAndConfirm(batch.signed, job, signal, repricer(s, batch));
  // Every version of a batch asks the same limit (a re-sign changes only the price).
  const { unitLimit } = batch.signed.budget;
  if (outcome.kind === 'landed') {
    s.bidder.landed();
    await learnFromLanding(s.rpc, s.ceilings, { signature: outcome.signature, action: job.action, unitLimit, count: job.indices.length }, signal);
    return outcome;
  }
  const err = outcome.failure;
  if (err.context.transactionError === 'ComputationalBudgetExceeded') s.ceilings.exceeded(job.action, unitLimit, job.indices.length);
  if (err.context.transactionError === LOADED_ACCOUNTS_EXCEEDED) s.loaded.exceeded();
  if (err.context.outcome === 'landed_with_error') s.bidder.landed();
  if (err.context.outcome !== 'not_landed') return outcome;
  // A transaction no node accepted says nothing about its price (an RPC outage, not congestion).
  if (err.context.sendsAccepted !== 0 && s.sender.lifetimeOf(batch.signed).notLandedIsOutbid) s.bidder.expired();
  const priced = new BridgeError('CHAIN__FAILED_TO_SUBMIT', err.context, { ...err.words, fee: feeNote(batch.bid) }, { cause: err.cause });
  return { kind: 'failed', failure: priced };
}

/**
 * A version of the batch at the chain's next escalation step, against the same lifetime value
 * and with the same instructions and limit, for a lifetime that re-prices while it waits
 * (./settle/nonce-lifetime.ts); undefined when the bid would not rise (it is at the cap).
 */
function repricer(s: BudgetedSubmitter, batch: SignedBatch<BatchItem>): Reprice {
  const instructions = batch.items.map((item) => item.instruction);
  return async (current, signal) => {
    s.bidder.expired();
    const bid = await s.bidder.bid(instructions, signal);
    if (bid.microLamportsPerUnit <= current.budget.microLamportsPerUnit) return undefined;
    const budget = { ...current.budget, microLamportsPerUnit: bid.microLamportsPerUnit };
    return s.sender.sign(instructions, budget, batch.lead, signal, current.nonce);
  };
}
