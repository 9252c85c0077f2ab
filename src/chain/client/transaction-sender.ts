import type { Keypair, SignatureStatus, TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { Logger } from '../../log/logger.js';
import { describeError, isBridgeError } from '../../errors.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { ChainSide, CrankAction } from '../../domain.js';
import { boundText } from '../../text.js';
import { sleep } from '../../time.js';
import type { LandedTransaction } from '../bridge-chains.js';
import type { ChainRpc } from '../rpc/chain-rpc.js';
import { isDefiniteSendRefusal, preflightFailure, shortRpcFailure } from '../rpc/rpc-failure.js';
import { submitFailure, type ActionTarget } from './submit-failure.js';
import type { SignedSignatures } from './authority-history.js';
import { classifyTransactionError, isAlreadyProcessed } from './transaction-failure.js';
import { chainName } from '../chain-name.js';
import { NativeSigner } from './native-signer.js';
import { BUDGET_INSTRUCTION_COUNT, budgetInstructions, type ComputeBudget } from './compute-budget.js';
import { LAMPORTS_PER_SIGNATURE, priorityFeeLamports } from '../fee-rate.js';

/**
 * Signs, sends and confirms one transaction at a time on one chain, without websockets:
 * sign once; send with preflight and maxRetries 0; rebroadcast the same bytes while polling
 * getSignatureStatuses; the transaction can no longer land only when the block height has
 * passed its lastValidBlockHeight and a final status search finds nothing. That ends the
 * attempt with a retryable failure (an attempt is one signed transaction's life): the crank
 * reads and plans again and its next attempt signs anew, up to BRIDGE_CRANK_MAX_ATTEMPTS.
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

type ConfirmOutcome = 'landed' | 'expired';

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
}

/** What became of the sends of one signed transaction: for the reason when it never lands. */
interface SendRecord {
  sent: number;
  failed: number;
  lastFailure: unknown;
  /** The latest send failed. */
  lastFailed: boolean;
}

type Poll = { kind: 'found'; status: SignatureStatus } | { kind: 'absent' } | { kind: 'unavailable' };

export interface TransactionSenderOptions {
  rpc: ChainRpc;
  authority: Keypair;
  metrics: Metrics;
  logger: Logger;
  timing?: SubmitTiming;
  /** Every signature this sender makes is added here (second-signer detection). */
  signed: SignedSignatures;
}

export class TransactionSender {
  private readonly pending = new Map<string, Pending>();
  private readonly rpc: ChainRpc;
  private readonly signer: NativeSigner;
  private readonly metrics: Metrics;
  private readonly logger: Logger;
  private readonly timing: SubmitTiming;
  private readonly signed: SignedSignatures;

  constructor(options: TransactionSenderOptions) {
    this.rpc = options.rpc;
    this.signer = new NativeSigner(options.authority);
    this.metrics = options.metrics;
    this.logger = options.logger;
    this.timing = options.timing ?? DEFAULT_SUBMIT_TIMING;
    this.signed = options.signed;
  }

  /** Signs `instructions` behind the budget's SetComputeUnitLimit and SetComputeUnitPrice. */
  async sign(instructions: readonly TransactionInstruction[], budget: ComputeBudget, signal: AbortSignal): Promise<SignedTransaction> {
    const { blockhash, lastValidBlockHeight } = await this.rpc.getLatestBlockhash('confirmed', signal);
    const { wire, signature } = this.signer.signTransaction([...budgetInstructions(budget), ...instructions], blockhash, lastValidBlockHeight);
    const encoded = bs58.encode(signature);
    this.signed.add(encoded);
    return { wire, signature: encoded, lastValidBlockHeight, budget };
  }

  /**
   * Sends `signed` and resolves once it landed (confirmed without error). Throws
   * CHAIN__FAILED_TO_SUBMIT saying what became of it: `refused` in preflight, `landed_with_error`,
   * `not_landed` (its blockhash expired: the reason says what became of its sends) or
   * `unknown` (not confirmed in time).
   */
  async sendAndConfirm(signed: SignedTransaction, job: TransactionJob, signal: AbortSignal): Promise<void> {
    // Pending from before the first byte leaves: an abort during the send leaves it unresolved.
    const sends: SendRecord = { sent: 0, failed: 0, lastFailure: undefined, lastFailed: false };
    this.pending.set(signed.signature, { signed, job, sends });
    await this.sendFirst(signed, job, sends, signal);
    const outcome = await this.confirm(signed, job, sends, { resumed: false }, signal);
    if (outcome === 'expired') throw this.notLanded(signed, job, sends);
  }

  /** Resolves the transactions of `action` that earlier calls left pending. */
  async settlePending(action: CrankAction, signal: AbortSignal): Promise<SettledPending> {
    const mine = [...this.pending.values()].filter((entry) => entry.job.action === action);
    const landed: LandedTransaction[] = [];
    const landedWithError: LandedTransaction[] = [];
    for (const { signed, job, sends } of mine) {
      try {
        const outcome = await this.confirm(signed, job, sends, { resumed: true }, signal);
        if (outcome === 'landed') landed.push({ signature: signed.signature, indices: job.indices });
      } catch (err) {
        // It landed with an error: resolved, and the failure belonged to the earlier call.
        if (!isBridgeError(err, 'CHAIN__FAILED_TO_SUBMIT') || err.context.outcome !== 'landed_with_error') throw err;
        const signature = signed.signature;
        this.logger.warn({ err, signature, action }, 'an earlier transaction of this action landed with an error');
        landedWithError.push({ signature, indices: job.indices });
      }
    }
    return { hadPending: mine.length > 0, landed, landedWithError };
  }

  private async sendFirst(signed: SignedTransaction, job: TransactionJob, sends: SendRecord, signal: AbortSignal): Promise<void> {
    sends.sent++;
    try {
      await this.rpc.sendTransaction(signed.wire, { skipPreflight: false, preflightCommitment: 'confirmed' }, signal);
      sends.lastFailed = false;
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      const preflight = preflightFailure(err);
      if (preflight !== undefined && isAlreadyProcessed(preflight.transactionError)) return;
      if (preflight !== undefined) {
        this.pending.delete(signed.signature);
        const failure = classifyTransactionError(preflight.transactionError);
        const index = this.failingIndex(failure.programError?.instructionIndex, job);
        throw submitFailure(job, { ...failure, ...index, outcome: 'refused', reason: `${failure.reason}, refused in preflight` }, [], err);
      }
      if (isDefiniteSendRefusal(err)) {
        this.pending.delete(signed.signature);
        throw err;
      }
      sends.failed++;
      sends.lastFailure = err;
      sends.lastFailed = true;
      const signature = signed.signature;
      this.logger.warn({ err, signature, action: job.action }, 'sendTransaction outcome unknown; watching the signature');
    }
  }

  private async confirm(
    signed: SignedTransaction,
    job: TransactionJob,
    sends: SendRecord,
    { resumed }: { resumed: boolean },
    signal: AbortSignal,
  ): Promise<ConfirmOutcome> {
    const { pollIntervalMs, rebroadcastIntervalMs, confirmTimeoutMs } = this.timing;
    const started = Date.now();
    // A resumed transaction may be long expired or never sent: check and rebroadcast at once.
    let lastBroadcast = resumed ? Number.NEGATIVE_INFINITY : started;
    let lastExpiryCheck = resumed ? Number.NEGATIVE_INFINITY : started;
    for (;;) {
      const checkExpiry = Date.now() - lastExpiryCheck >= rebroadcastIntervalMs;
      if (checkExpiry) lastExpiryCheck = Date.now();
      const outcome = await this.pollOutcome(signed, job, checkExpiry, signal);
      if (outcome !== 'waiting') {
        this.pending.delete(signed.signature);
        return outcome;
      }
      // After a failed send the bytes may have reached no node: send again at the next poll
      // rather than a whole rebroadcast interval later (a flaky RPC costs a poll, not 2 s).
      const sendDue = sends.lastFailed ? pollIntervalMs : rebroadcastIntervalMs;
      if (Date.now() - lastBroadcast >= sendDue) {
        lastBroadcast = Date.now();
        await this.rebroadcast(signed, sends, signal);
      }
      if (Date.now() - started >= confirmTimeoutMs) throw this.unresolved(signed, job);
      await sleep(pollIntervalMs, signal);
    }
  }

  private async pollOutcome(
    signed: SignedTransaction,
    job: TransactionJob,
    checkExpiry: boolean,
    signal: AbortSignal,
  ): Promise<ConfirmOutcome | 'waiting'> {
    const recent = await this.poll(signed.signature, false, signal);
    if (recent.kind === 'found') return this.outcomeOf(recent.status, signed, job);
    if (!checkExpiry || !(await this.blockhashExpired(signed, signal))) return 'waiting';
    const final = await this.poll(signed.signature, true, signal);
    if (final.kind === 'found') return this.outcomeOf(final.status, signed, job);
    if (final.kind === 'unavailable') return 'waiting';
    const { signature, lastValidBlockHeight } = signed;
    this.metrics.transactionResigns.inc({ chain: this.rpc.chain });
    this.logger.warn(
      { signature, action: job.action, indices: job.indices, lastValidBlockHeight },
      'blockhash expired before the transaction landed; this attempt ends and the next one signs anew',
    );
    return 'expired';
  }

  // An error seen only at `processed` may belong to a fork that dies; wait until it is confirmed.
  private outcomeOf(status: SignatureStatus, signed: SignedTransaction, job: TransactionJob): ConfirmOutcome | 'waiting' {
    const settled = status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized';
    if (!settled) return 'waiting';
    this.recordLanded(signed.budget);
    if (status.err !== null) {
      this.pending.delete(signed.signature);
      const failure = classifyTransactionError(status.err);
      const index = this.failingIndex(failure.programError?.instructionIndex, job);
      const reason = `${failure.reason}, landed in transaction ${signed.signature}`;
      throw submitFailure(job, { ...failure, ...index, outcome: 'landed_with_error', signature: signed.signature, reason });
    }
    const { signature } = signed;
    this.logger.info({ signature, action: job.action, indices: job.indices, chain: this.rpc.chain }, 'transaction landed');
    return 'landed';
  }

  private async poll(signature: string, searchTransactionHistory: boolean, signal: AbortSignal): Promise<Poll> {
    try {
      const status = await this.rpc.getSignatureStatus(signature, { searchTransactionHistory }, signal);
      return status === null ? { kind: 'absent' } : { kind: 'found', status };
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      this.logger.debug({ err, signature }, 'signature status poll failed');
      return { kind: 'unavailable' };
    }
  }

  private async blockhashExpired(signed: SignedTransaction, signal: AbortSignal): Promise<boolean> {
    try {
      return (await this.rpc.getBlockHeight('confirmed', signal)) > signed.lastValidBlockHeight;
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      this.logger.debug({ err }, 'block height check failed');
      return false;
    }
  }

  private async rebroadcast(signed: SignedTransaction, sends: SendRecord, signal: AbortSignal): Promise<void> {
    this.metrics.transactionRebroadcasts.inc({ chain: this.rpc.chain });
    sends.sent++;
    try {
      await this.rpc.sendTransaction(signed.wire, { skipPreflight: true, preflightCommitment: 'confirmed' }, signal);
      sends.lastFailed = false;
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      sends.failed++;
      sends.lastFailure = err;
      sends.lastFailed = true;
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

  private notLanded(signed: SignedTransaction, job: TransactionJob, sends: SendRecord): Error {
    const expired = `transaction ${signed.signature} not landed: its blockhash expired (block height past ${signed.lastValidBlockHeight})`;
    const reason = `${expired}; ${describeSends(this.rpc.chain, sends)}`;
    return submitFailure(job, { outcome: 'not_landed', reason, sendsAccepted: sends.sent - sends.failed });
  }

  private unresolved(signed: SignedTransaction, job: TransactionJob): Error {
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
  const accepted = sends.sent - sends.failed;
  return `the ${side} chain's RPC accepted it ${accepted} of ${times} but it never landed (dropped before a leader included it)`;
}

// An RPC failure's text is already bounded where it was made (rpcFailure); anything else is not.
function sendFailureSummary(err: unknown): string {
  return isBridgeError(err, 'CHAIN__RPC_FAILED') ? shortRpcFailure(err) : boundText(describeError(err));
}
