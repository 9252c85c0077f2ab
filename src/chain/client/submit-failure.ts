import { BridgeError, isBridgeError, type SubmitOutcome } from '../../errors.js';
import type { CrankAction } from '../../domain.js';
import type { LandedTransaction } from '../bridge-chains.js';
import { decodeProgramError, programErrorName, type DecodedProgramError } from '../program-errors.js';
import type { TrackerRef } from './tracker-reader.js';
import { chainName } from '../chain-name.js';

/**
 * What a transaction error says (a preflight refusal's `data.err`, or a landed transaction's
 * status `err`), as facts: a program error by its PROTOCOL.md name, or a runtime error by its
 * name; and CHAIN__FAILED_TO_SUBMIT carrying them for a crank action. Messages read like
 * "ack_deposit on destination tracker <addr> failed: VoteOutOfOrder (6001) at index 12".
 * Whether the action tries again is src/failure-policy.ts's decision.
 */

export interface ActionTarget {
  action: CrankAction;
  tracker: TrackerRef;
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

function trackerName(tracker: TrackerRef): string {
  return `${chainName(tracker.chain)} tracker ${tracker.account}`;
}

export function submitFailure(
  target: ActionTarget,
  detail: SubmitFailureDetail,
  landed: readonly LandedTransaction[] = [],
  cause?: unknown,
): BridgeError<'CHAIN__FAILED_TO_SUBMIT'> {
  const { outcome, reason, programError, transactionError, index, signature, sendsAccepted } = detail;
  const where = index === undefined ? '' : ` at index ${index}`;
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
    `${target.action} on ${trackerName(target.tracker)} failed: ${reason}${where}${landedNote(landed)}`,
    { cause },
  );
}

/**
 * Any failure inside an action as CHAIN__FAILED_TO_SUBMIT carrying the signatures of the
 * action's transactions that landed before it. An abort passes through unchanged.
 */
export function asSubmitFailure(
  err: unknown,
  target: ActionTarget,
  landed: readonly LandedTransaction[],
  signal: AbortSignal,
): unknown {
  if (signal.aborted) return signal.reason;
  if (isBridgeError(err, 'CHAIN__FAILED_TO_SUBMIT')) {
    if (landed.length === 0 || err.context.landedSignatures.length > 0) return err;
    return new BridgeError(
      'CHAIN__FAILED_TO_SUBMIT',
      { ...err.context, landedSignatures: landed.map((transaction) => transaction.signature) },
      `${err.message}${landedNote(landed)}`,
      { cause: err.cause },
    );
  }
  const reason = err instanceof Error ? err.message : String(err);
  return submitFailure(target, { outcome: 'failed', reason }, landed, err);
}

function landedNote(landed: readonly LandedTransaction[]): string {
  return landed.length === 0 ? '' : ` (${landed.length} earlier transaction(s) of this action landed)`;
}

export interface TransactionFailure {
  /** e.g. "VoteOutOfOrder (6001)", "BlockhashNotFound". */
  reason: string;
  programError?: DecodedProgramError;
  /** The runtime error's name (e.g. "BlockhashNotFound") when it is not a program error. */
  transactionError?: string;
}

// The fee payer cannot pay: the reason says what to do.
const UNFUNDED_FEE_PAYER = new Set(['InsufficientFundsForFee', 'AccountNotFound']);

export function classifyTransactionError(transactionError: unknown): TransactionFailure {
  const programError = decodeProgramError(transactionError);
  if (programError !== undefined) {
    const { code } = programError;
    const known = programErrorName(code) !== undefined;
    const reason = known ? `${programError.name} (${code})` : `custom program error ${code}, not listed in PROTOCOL.md`;
    return { reason, programError };
  }
  const instructionError = runtimeInstructionError(transactionError);
  if (instructionError !== undefined) {
    const [position, name] = instructionError;
    return { reason: `${name} in instruction ${position}`, transactionError: name };
  }
  if (typeof transactionError === 'string') {
    if (UNFUNDED_FEE_PAYER.has(transactionError)) {
      return { reason: `${transactionError}: the authority cannot pay the fee; fund it on this chain`, transactionError };
    }
    return { reason: transactionError, transactionError };
  }
  return { reason: JSON.stringify(transactionError) ?? String(transactionError) };
}

/** `{"InstructionError":[i,"<name>"]}`: a runtime error of one instruction, e.g. ComputationalBudgetExceeded. */
function runtimeInstructionError(transactionError: unknown): [number, string] | undefined {
  if (typeof transactionError !== 'object' || transactionError === null) return undefined;
  const detail = (transactionError as { InstructionError?: unknown }).InstructionError;
  if (!Array.isArray(detail) || typeof detail[0] !== 'number' || typeof detail[1] !== 'string') return undefined;
  return [detail[0], detail[1]];
}

/** The transaction was processed before: the same bytes already landed. */
export function isAlreadyProcessed(transactionError: unknown): boolean {
  return transactionError === 'AlreadyProcessed';
}
