import { BridgeError, isBridgeError, type SubmitOutcome } from '../../../../errors.js';
import type { CrankAction } from '../../../../domain.js';
import type { LandedTransaction } from '../../../port/bridge-chains.js';
import { classifyTransactionError, type DecodedProgramError } from '../../../program-errors.js';
import type { TrackerRef } from '../../read/tracker-reader.js';

/**
 * What became of a transaction, as a value, and an action's failure as CHAIN__FAILED_TO_SUBMIT:
 * facts only (what became of it, the program error, the entry), never whether to try again
 * (src/failure-policy.ts decides that).
 */

export interface ActionTarget {
  action: CrankAction;
  tracker: TrackerRef;
}

/** One transaction of an action: where it goes and the entry index of each instruction. */
export interface TransactionJob extends ActionTarget {
  indices: number[];
}

/**
 * What became of one signed transaction: it landed, or a CHAIN__FAILED_TO_SUBMIT says what
 * became of it (`refused` in preflight, `landed_with_error`, `not_landed` or `unknown`).
 */
export type SendOutcome = { kind: 'landed'; signature: string } | { kind: 'failed'; failure: BridgeError<'CHAIN__FAILED_TO_SUBMIT'> };

/**
 * The outcome of a transaction error (a preflight refusal's, or a landed transaction's): what it
 * says (program-errors.ts), at which entry, and where it happened.
 */
export function failedWith(
  job: TransactionJob,
  transactionError: unknown,
  { outcome, where, signature, leading }: { outcome: 'refused' | 'landed_with_error'; where: string; signature?: string; leading: number },
  cause?: unknown,
): SendOutcome {
  const failure = classifyTransactionError(transactionError);
  const index = failingIndex(failure.programError?.instructionIndex, job, leading);
  const detail = { ...failure, ...index, outcome, ...(signature === undefined ? {} : { signature }), reason: `${failure.reason}, ${where}` };
  return { kind: 'failed', failure: submitFailure(job, detail, [], cause) };
}

// Instruction positions count the instructions that lead every transaction (the advance, the budget's).
function failingIndex(instructionIndex: number | undefined, job: TransactionJob, leading: number): { index?: number } {
  const index = instructionIndex === undefined ? undefined : job.indices[instructionIndex - leading];
  return index === undefined ? {} : { index };
}

export interface SubmitFailureDetail {
  outcome: SubmitOutcome;
  reason: string;
  programError?: DecodedProgramError;
  transactionError?: string;
  /** The entry index of the failing instruction. */
  index?: number;
  /**
   * `landed_with_error`: the transaction that landed (its fee was paid). `unknown`: the
   * transaction whose outcome is still unknown (it may land later).
   */
  signature?: string;
  /** `not_landed`: sends an RPC node accepted. */
  sendsAccepted?: number;
}

/**
 * CHAIN__FAILED_TO_SUBMIT for a crank action, with the facts of what became of it. Messages read
 * like "ack_deposit on destination tracker <addr> failed: VoteOutOfOrder (6001) at index 12".
 */
export function submitFailure(
  target: ActionTarget,
  detail: SubmitFailureDetail,
  landed: readonly LandedTransaction[] = [],
  cause?: unknown,
): BridgeError<'CHAIN__FAILED_TO_SUBMIT'> {
  const { outcome, reason, programError, transactionError, index, signature, sendsAccepted } = detail;
  return new BridgeError(
    'CHAIN__FAILED_TO_SUBMIT',
    {
      chain: target.tracker.chain,
      action: target.action,
      outcome,
      ...(programError === undefined ? {} : { programError: programError.name, customCode: programError.code }),
      ...(transactionError === undefined ? {} : { transactionError }),
      ...(index === undefined ? {} : { index }),
      ...(signature === undefined ? {} : { signature }),
      ...(sendsAccepted === undefined ? {} : { sendsAccepted }),
      landedSignatures: landed.map((transaction) => transaction.signature),
    },
    { tracker: target.tracker.account, reason },
    { cause },
  );
}

/**
 * Any failure inside an action as CHAIN__FAILED_TO_SUBMIT carrying the signatures of the
 * action's transactions that landed before it. An abort passes through unchanged.
 */
export function asSubmitFailure(err: unknown, target: ActionTarget, landed: readonly LandedTransaction[], signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  if (isBridgeError(err, 'CHAIN__FAILED_TO_SUBMIT')) {
    if (landed.length === 0 || err.context.landedSignatures.length > 0) return err;
    const landedSignatures = landed.map((transaction) => transaction.signature);
    return new BridgeError('CHAIN__FAILED_TO_SUBMIT', { ...err.context, landedSignatures }, err.words, { cause: err.cause });
  }
  const reason = err instanceof Error ? err.message : String(err);
  return submitFailure(target, { outcome: 'failed', reason }, landed, err);
}

/** Whether `outcome` put something on chain (its fee was paid): landed, with an error or not. */
export function landedOnChain(outcome: SendOutcome): boolean {
  return outcome.kind === 'landed' || outcome.failure.context.outcome === 'landed_with_error';
}

/** Whether `outcome` is a transaction that can no longer land. */
export function neverLands(outcome: SendOutcome): boolean {
  return outcome.kind === 'failed' && outcome.failure.context.outcome === 'not_landed';
}
