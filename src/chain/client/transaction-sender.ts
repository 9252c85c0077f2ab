import type { SignatureStatus, TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { Logger } from '../../log/logger.js';
import { describeError, isBridgeError, type BridgeError } from '../../errors.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { ChainSide, CrankAction } from '../../domain.js';
import { boundText } from '../../text.js';
import { sleep } from '../../time.js';
import type { AuthoritySigner } from '../authority-signer.js';
import type { LandedTransaction } from '../bridge-chains.js';
import { isHistoryUnavailable, type ChainHeight, type ChainRpc, type SignatureStatusAt } from '../rpc/chain-rpc.js';
import { preflightFailure, shortRpcFailure } from '../rpc/rpc-failure.js';
import { isDefiniteSendRefusal } from '../../failure-policy.js';
import { classifyTransactionError, isAlreadyProcessed, submitFailure, type ActionTarget } from './submit-failure.js';
import type { SignedSignatures } from './authority-history.js';
import { signTransaction } from './sign-transaction.js';
import { chainName } from '../chain-name.js';
import { BUDGET_INSTRUCTION_COUNT, budgetInstructions, type ComputeBudget } from './compute-budget.js';
import { LAMPORTS_PER_SIGNATURE, priorityFeeLamports } from '../fee-rate.js';

/**
 * Signs, sends and confirms one transaction at a time on one chain, without websockets:
 * sign once; send with preflight and maxRetries 0; rebroadcast the same bytes while polling
 * getSignatureStatuses; the transaction can no longer land only when the block height has
 * passed its lastValidBlockHeight and a status read from a view at or past the slot where it
 * did finds nothing (docs/chain-client.md, "Which slot anchors each decision"): a history
 * search, or without history the status cache while it still covers the transaction. That
 * ends the attempt with a retryable failure (an attempt is one signed transaction's life): the
 * crank reads and plans again and its next attempt signs anew, up to BRIDGE_CRANK_MAX_ATTEMPTS.
 *
 * A transaction that leaves `sendAndConfirm` without a known outcome (the caller aborted, or
 * no confirmation within `confirmTimeoutMs`) stays pending: the next call for the same action
 * first resolves it (`settlePending`) before anything new is signed.
 */

export interface SubmitTiming {
  /** Between getSignatureStatuses polls. */
  pollIntervalMs: number;
  /** Between rebroadcasts of the same bytes, and between block height checks. */
  rebroadcastIntervalMs: number;
  /** Give up waiting (the transaction stays pending) after this long. */
  confirmTimeoutMs: number;
}

export const DEFAULT_SUBMIT_TIMING: SubmitTiming = {
  pollIntervalMs: 450,
  rebroadcastIntervalMs: 2_000,
  // A blockhash lives 150 blocks (about 60 to 90 s); past this the chain or the RPC is stuck.
  confirmTimeoutMs: 120_000,
};

export interface SignedTransaction {
  wire: Uint8Array;
  signature: string;
  lastValidBlockHeight: number;
  /** The compute budget its leading instructions set. */
  budget: ComputeBudget;
}

/** One transaction of an action: where it goes and the entry index of each instruction. */
export interface TransactionJob extends ActionTarget {
  indices: number[];
}

/**
 * What became of one signed transaction, as a value: it landed, or a CHAIN__FAILED_TO_SUBMIT
 * says what became of it (`refused` in preflight, `landed_with_error`, `not_landed` or
 * `unknown`). Whether anything is tried again is src/failure-policy.ts's decision.
 */
export type SendOutcome = { kind: 'landed' } | { kind: 'failed'; failure: BridgeError<'CHAIN__FAILED_TO_SUBMIT'> };

const LANDED: SendOutcome = { kind: 'landed' };

/**
 * How far past a transaction's lastValidBlockHeight a node without history still knows it
 * (shared/PROTOCOL.md): the status cache covers roughly the last 300 slots and a transaction
 * lands at most 150 blocks before its expiry, so about 150; 50 are left as a margin. Counted in
 * blocks past expiry plus slots since (slots run ahead of blocks when slots are skipped, so the
 * count errs early).
 */
const STATUS_CACHE_BLOCKS_PAST_EXPIRY = 100;

/** A failing send is re-sent after pollIntervalMs, doubling per failure in a row up to this many rebroadcast intervals. */
const FAILED_SEND_BACKOFF_MAX_REBROADCASTS = 4;

export interface SettledPending {
  /** Some transaction of this action was pending: the caller must re-check the chain. */
  hadPending: boolean;
  landed: LandedTransaction[];
  /** Pending transactions that landed with a program error: nothing changed, but the fee was paid. */
  landedWithError: LandedTransaction[];
}

interface Pending {
  signed: SignedTransaction;
  job: TransactionJob;
  sends: SendRecord;
  /** A view (slot and height, one answer) in which the block height had passed lastValidBlockHeight. */
  expiredIn?: ChainHeight;
}

/** What became of the sends of one signed transaction: for the reason when it never lands, and the pace of the next send. */
class SendRecord {
  sent = 0;
  failed = 0;
  lastFailure: unknown = undefined;
  /** Sends that failed in a row, the latest included (0: the latest went through). */
  failedInARow = 0;

  /** Counted before the bytes leave: an abort during the send still counts it. */
  sending(): void {
    this.sent++;
  }

  wentThrough(): void {
    this.failedInARow = 0;
  }

  /** The node's answer left it unknown whether the bytes went on. */
  failedWith(err: unknown): void {
    this.failed++;
    this.lastFailure = err;
    this.failedInARow++;
  }

  get accepted(): number {
    return this.sent - this.failed;
  }
}

type Poll = { kind: 'found'; status: SignatureStatus } | { kind: 'absent'; slot: number } | { kind: 'unavailable' };

export interface TransactionSenderOptions {
  rpc: ChainRpc;
  signer: AuthoritySigner;
  metrics: Metrics;
  logger: Logger;
  timing?: SubmitTiming;
  /** Every signature this sender makes is added here (second-signer detection). */
  signed: SignedSignatures;
}

export class TransactionSender {
  private readonly pending = new Map<string, Pending>();
  private readonly rpc: ChainRpc;
  private readonly signer: AuthoritySigner;
  private readonly metrics: Metrics;
  private readonly logger: Logger;
  private readonly timing: SubmitTiming;
  private readonly signed: SignedSignatures;

  constructor(options: TransactionSenderOptions) {
    this.rpc = options.rpc;
    this.signer = options.signer;
    this.metrics = options.metrics;
    this.logger = options.logger;
    this.timing = options.timing ?? DEFAULT_SUBMIT_TIMING;
    this.signed = options.signed;
  }

  /** Signs `instructions` behind the budget's SetComputeUnitLimit and SetComputeUnitPrice. */
  async sign(instructions: readonly TransactionInstruction[], budget: ComputeBudget, signal: AbortSignal): Promise<SignedTransaction> {
    const { blockhash, lastValidBlockHeight } = await this.rpc.getLatestBlockhash('confirmed', signal);
    const { wire, signature } = await signTransaction(this.signer, [...budgetInstructions(budget), ...instructions], blockhash, lastValidBlockHeight);
    const encoded = bs58.encode(signature);
    this.signed.add(encoded);
    return { wire, signature: encoded, lastValidBlockHeight, budget };
  }

  /**
   * Sends `signed` and watches it until its outcome is known or `confirmTimeoutMs` passed
   * (`unknown`: it stays pending). Throws only for an abort, or the RPC failure of a send that
   * a node certainly refused to forward.
   */
  async sendAndConfirm(signed: SignedTransaction, job: TransactionJob, signal: AbortSignal): Promise<SendOutcome> {
    // Pending from before the first byte leaves: an abort during the send leaves it unresolved.
    const sends = new SendRecord();
    const pending: Pending = { signed, job, sends };
    this.pending.set(signed.signature, pending);
    const refused = await this.sendFirst(signed, job, sends, signal);
    return refused ?? (await this.confirm(pending, { resumed: false }, signal));
  }

  /** Resolves the transactions of `action` that earlier calls left pending. */
  async settlePending(action: CrankAction, signal: AbortSignal): Promise<SettledPending> {
    const mine = [...this.pending.values()].filter((entry) => entry.job.action === action);
    const landed: LandedTransaction[] = [];
    const landedWithError: LandedTransaction[] = [];
    for (const entry of mine) {
      const { signed, job } = entry;
      const transaction = { signature: signed.signature, indices: job.indices };
      const outcome = await this.confirm(entry, { resumed: true }, signal);
      if (outcome.kind === 'landed') {
        landed.push(transaction);
        continue;
      }
      const err = outcome.failure;
      // Still unknown: nothing new may be signed for this action until it is resolved.
      if (err.context.outcome === 'unknown') throw err;
      // Landed with an error: resolved, and the failure belonged to the earlier call. Expired: resolved, nothing landed.
      if (err.context.outcome !== 'landed_with_error') continue;
      this.logger.warn({ err, signature: signed.signature, action }, 'an earlier transaction of this action landed with an error');
      landedWithError.push(transaction);
    }
    return { hadPending: mine.length > 0, landed, landedWithError };
  }

  /** The outcome when preflight refused the transaction; undefined when it is to be watched. */
  private async sendFirst(signed: SignedTransaction, job: TransactionJob, sends: SendRecord, signal: AbortSignal): Promise<SendOutcome | undefined> {
    sends.sending();
    try {
      await this.rpc.sendTransaction(signed.wire, { skipPreflight: false, preflightCommitment: 'confirmed' }, signal);
      sends.wentThrough();
      return undefined;
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      const preflight = preflightFailure(err);
      if (preflight !== undefined && isAlreadyProcessed(preflight.transactionError)) return undefined;
      if (preflight !== undefined) {
        this.pending.delete(signed.signature);
        const failure = classifyTransactionError(preflight.transactionError);
        const index = this.failingIndex(failure.programError?.instructionIndex, job);
        const refused = submitFailure(job, { ...failure, ...index, outcome: 'refused', reason: `${failure.reason}, refused in preflight` }, [], err);
        return { kind: 'failed', failure: refused };
      }
      if (isDefiniteSendRefusal(err)) {
        this.pending.delete(signed.signature);
        throw err;
      }
      sends.failedWith(err);
      const signature = signed.signature;
      this.logger.warn({ err, signature, action: job.action }, 'sendTransaction outcome unknown; watching the signature');
      return undefined;
    }
  }

  private async confirm(pending: Pending, { resumed }: { resumed: boolean }, signal: AbortSignal): Promise<SendOutcome> {
    const { signed, job, sends } = pending;
    const { pollIntervalMs, rebroadcastIntervalMs, confirmTimeoutMs } = this.timing;
    const started = Date.now();
    // A resumed transaction may be long expired or never sent: check and rebroadcast at once.
    let lastBroadcast = resumed ? Number.NEGATIVE_INFINITY : started;
    let lastExpiryCheck = resumed ? Number.NEGATIVE_INFINITY : started;
    for (;;) {
      const checkExpiry = Date.now() - lastExpiryCheck >= rebroadcastIntervalMs;
      if (checkExpiry) lastExpiryCheck = Date.now();
      const outcome = await this.pollOutcome(pending, checkExpiry, signal);
      if (outcome !== 'waiting') {
        this.pending.delete(signed.signature);
        return outcome;
      }
      if (Date.now() - lastBroadcast >= this.sendInterval(sends)) {
        lastBroadcast = Date.now();
        await this.rebroadcast(signed, sends, signal);
      }
      if (Date.now() - started >= confirmTimeoutMs) return { kind: 'failed', failure: this.unresolved(signed, job) };
      await sleep(pollIntervalMs, signal);
    }
  }

  /**
   * After a failed send the bytes may have reached no node: send again soon, at the next poll
   * after one failure, backing off (doubling) with each failure in a row up to
   * FAILED_SEND_BACKOFF_MAX_REBROADCASTS rebroadcast intervals, and never before the
   * endpoint's Retry-After.
   */
  private sendInterval(sends: SendRecord): number {
    const { pollIntervalMs, rebroadcastIntervalMs } = this.timing;
    if (sends.failedInARow === 0) return rebroadcastIntervalMs;
    const backoff = Math.min(pollIntervalMs * 2 ** (sends.failedInARow - 1), FAILED_SEND_BACKOFF_MAX_REBROADCASTS * rebroadcastIntervalMs);
    const asked = isBridgeError(sends.lastFailure, 'CHAIN__RPC_FAILED') ? (sends.lastFailure.context.retryAfterMs ?? 0) : 0;
    return Math.max(backoff, asked);
  }

  private async pollOutcome(pending: Pending, checkExpiry: boolean, signal: AbortSignal): Promise<SendOutcome | 'waiting'> {
    const { signed, job, sends } = pending;
    const recent = await this.poll(signed.signature, false, signal);
    if (recent.kind === 'found') return this.outcomeOf(recent.status, signed, job);
    if (pending.expiredIn === undefined && checkExpiry) pending.expiredIn = await this.expiredIn(signed, signal);
    const expiredIn = pending.expiredIn;
    if (expiredIn === undefined) return 'waiting';
    const final = await this.finalStatus(signed, expiredIn, recent, signal);
    if (final.kind === 'found') return this.outcomeOf(final.status, signed, job);
    if (final.kind === 'unavailable') return 'waiting';
    // A view older than the one that saw the height pass (a lagging node) may not have the
    // transaction yet: no decision from it.
    if (final.slot < expiredIn.slot) return 'waiting';
    const { signature, lastValidBlockHeight } = signed;
    this.metrics.transactionResigns.inc({ chain: this.rpc.chain });
    this.logger.warn(
      { signature, action: job.action, indices: job.indices, lastValidBlockHeight, expiredAtSlot: expiredIn.slot, statusSlot: final.slot },
      'blockhash expired before the transaction landed; this attempt ends and the next one signs anew',
    );
    return { kind: 'failed', failure: this.notLanded(signed, job, sends) };
  }

  /**
   * The status that decides expiry: a history search where some endpoint keeps history; else
   * this round's status-cache read, which knows every transaction of a blockhash still within
   * STATUS_CACHE_BLOCKS_PAST_EXPIRY blocks of its expiry. Past that reach, without history,
   * nothing more can be learned: the absence stands, and the next attempt's fresh read of the
   * trackers decides what is still to do.
   */
  private async finalStatus(signed: SignedTransaction, expiredIn: ChainHeight, recent: Poll, signal: AbortSignal): Promise<Poll> {
    if (this.rpc.hasHistory() !== false) {
      const searched = await this.poll(signed.signature, true, signal);
      if (searched.kind !== 'unavailable' || this.rpc.hasHistory() !== false) return searched;
    }
    if (recent.kind !== 'absent') return recent;
    const blocksPast = expiredIn.blockHeight - signed.lastValidBlockHeight + Math.max(0, recent.slot - expiredIn.slot);
    if (blocksPast > STATUS_CACHE_BLOCKS_PAST_EXPIRY) {
      this.logger.warn(
        { signature: signed.signature, blocksPast, lastValidBlockHeight: signed.lastValidBlockHeight },
        'transaction checked past the status cache\'s reach without history on this chain: taken as not landed; the next attempt re-reads the trackers before planning',
      );
    }
    return recent;
  }

  // An error seen only at `processed` may belong to a fork that dies; wait until it is confirmed.
  private outcomeOf(status: SignatureStatus, signed: SignedTransaction, job: TransactionJob): SendOutcome | 'waiting' {
    const settled = status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized';
    if (!settled) return 'waiting';
    this.recordLanded(signed.budget);
    if (status.err !== null) {
      const failure = classifyTransactionError(status.err);
      const index = this.failingIndex(failure.programError?.instructionIndex, job);
      const reason = `${failure.reason}, landed in transaction ${signed.signature}`;
      return { kind: 'failed', failure: submitFailure(job, { ...failure, ...index, outcome: 'landed_with_error', signature: signed.signature, reason }) };
    }
    const { signature } = signed;
    this.logger.info({ signature, action: job.action, indices: job.indices, chain: this.rpc.chain }, 'transaction landed');
    return LANDED;
  }

  private async poll(signature: string, searchTransactionHistory: boolean, signal: AbortSignal): Promise<Poll> {
    let answer: SignatureStatusAt;
    try {
      answer = await this.rpc.getSignatureStatus(signature, { searchTransactionHistory }, signal);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      // Without history anywhere the search is not possible: the caller falls back to the status cache.
      if (!isHistoryUnavailable(err)) this.logger.debug({ err, signature }, 'signature status poll failed');
      return { kind: 'unavailable' };
    }
    return answer.status === null ? { kind: 'absent', slot: answer.slot } : { kind: 'found', status: answer.status };
  }

  /** The view (slot and height of one answer) in which the block height has passed lastValidBlockHeight; undefined while it has not. */
  private async expiredIn(signed: SignedTransaction, signal: AbortSignal): Promise<ChainHeight | undefined> {
    try {
      const view = await this.rpc.getChainHeight('confirmed', signal);
      return view.blockHeight > signed.lastValidBlockHeight ? view : undefined;
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      this.logger.debug({ err }, 'block height check failed');
      return undefined;
    }
  }

  private async rebroadcast(signed: SignedTransaction, sends: SendRecord, signal: AbortSignal): Promise<void> {
    this.metrics.transactionRebroadcasts.inc({ chain: this.rpc.chain });
    sends.sending();
    try {
      await this.rpc.sendTransaction(signed.wire, { skipPreflight: true, preflightCommitment: 'confirmed' }, signal);
      sends.wentThrough();
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      sends.failedWith(err);
      this.logger.debug({ err, signature: signed.signature }, 'rebroadcast failed');
    }
  }

  /** A landed transaction's fee (with an error or not, it was charged) and its compute, as the chain charges them. */
  private recordLanded({ unitLimit, microLamportsPerUnit, unitsConsumed }: ComputeBudget): void {
    const { chain } = this.rpc;
    this.metrics.feesPaid.inc({ chain, kind: 'base' }, LAMPORTS_PER_SIGNATURE);
    this.metrics.feesPaid.inc({ chain, kind: 'priority' }, priorityFeeLamports(microLamportsPerUnit, unitLimit));
    this.metrics.computeUnits.inc({ chain, kind: 'requested' }, unitLimit);
    this.metrics.computeUnits.inc({ chain, kind: 'used' }, unitsConsumed);
  }

  // Instruction positions count the budget instructions that lead every transaction.
  private failingIndex(instructionIndex: number | undefined, job: TransactionJob): { index?: number } {
    const index = instructionIndex === undefined ? undefined : job.indices[instructionIndex - BUDGET_INSTRUCTION_COUNT];
    return index === undefined ? {} : { index };
  }

  private notLanded(signed: SignedTransaction, job: TransactionJob, sends: SendRecord): BridgeError<'CHAIN__FAILED_TO_SUBMIT'> {
    const expired = `transaction ${signed.signature} not landed: its blockhash expired (block height past ${signed.lastValidBlockHeight})`;
    const reason = `${expired}; ${describeSends(this.rpc.chain, sends)}`;
    return submitFailure(job, { outcome: 'not_landed', reason, sendsAccepted: sends.accepted });
  }

  private unresolved(signed: SignedTransaction, job: TransactionJob): BridgeError<'CHAIN__FAILED_TO_SUBMIT'> {
    const seconds = Math.ceil(this.timing.confirmTimeoutMs / 1000);
    return submitFailure(job, {
      outcome: 'unknown',
      signature: signed.signature,
      reason:
        `transaction ${signed.signature} not confirmed within ${seconds} s; it may still land, ` +
        'and the next attempt resolves it before signing anything new',
    });
  }
}

/**
 * Why a transaction never landed, as far as this server can tell: every send failed (the
 * last failure names the status and endpoint), or the node accepted it and it was dropped.
 */
function describeSends(chain: ChainSide, sends: SendRecord): string {
  const side = chainName(chain);
  const times = `${sends.sent} send${sends.sent === 1 ? '' : 's'}`;
  if (sends.failed === sends.sent) return `sendTransaction on the ${side} chain failed every time (${times}; last: ${sendFailureSummary(sends.lastFailure)})`;
  return `the ${side} chain's RPC accepted it ${sends.accepted} of ${times} but it never landed (dropped before a leader included it)`;
}

// An RPC failure's text is already bounded where it was made (rpcFailure); anything else is not.
function sendFailureSummary(err: unknown): string {
  return isBridgeError(err, 'CHAIN__RPC_FAILED') ? shortRpcFailure(err) : boundText(describeError(err));
}
