import { Transaction, type Keypair, type SignatureStatus, type TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { Logger } from '../../log/logger.js';
import { isBridgeError } from '../../errors.js';
import type { CrankAction, Metrics } from '../../metrics/metrics.js';
import { sleep } from '../../time.js';
import type { LandedTransaction } from '../bridge-chains.js';
import type { ChainRpc } from '../rpc/chain-rpc.js';
import { isDefiniteSendRefusal, preflightFailure } from '../rpc/rpc-failure.js';
import { submitFailure, type ActionTarget } from './submit-failure.js';
import type { SignedSignatures } from './authority-history.js';
import { classifyTransactionError, isAlreadyProcessed } from './transaction-failure.js';

/**
 * Signs, sends and confirms one transaction at a time on one chain, without websockets:
 * sign once; send with preflight and maxRetries 0; rebroadcast the same bytes while polling
 * getSignatureStatuses; the transaction can no longer land only when the block height has
 * passed its lastValidBlockHeight and a final status search finds nothing. Only then may the
 * caller sign a replacement.
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
}

/** One transaction of an action: where it goes and the entry index of each instruction. */
export interface TransactionJob extends ActionTarget {
  indices: number[];
}

export type ConfirmOutcome = 'landed' | 'expired';

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
  private readonly authority: Keypair;
  private readonly metrics: Metrics;
  private readonly logger: Logger;
  private readonly timing: SubmitTiming;
  private readonly signed: SignedSignatures;

  constructor(options: TransactionSenderOptions) {
    this.rpc = options.rpc;
    this.authority = options.authority;
    this.metrics = options.metrics;
    this.logger = options.logger;
    this.timing = options.timing ?? DEFAULT_SUBMIT_TIMING;
    this.signed = options.signed;
  }

  async sign(instructions: readonly TransactionInstruction[], signal: AbortSignal): Promise<SignedTransaction> {
    const { blockhash, lastValidBlockHeight } = await this.rpc.getLatestBlockhash('confirmed', signal);
    const transaction = new Transaction({ feePayer: this.authority.publicKey, blockhash, lastValidBlockHeight });
    transaction.add(...instructions);
    transaction.sign(this.authority);
    const signature = transaction.signature;
    if (signature === null) throw new Error('web3.js left the fee payer signature empty after sign()');
    const encoded = bs58.encode(signature);
    this.signed.add(encoded);
    return { wire: transaction.serialize(), signature: encoded, lastValidBlockHeight };
  }

  /**
   * Sends `signed` and waits for its outcome. Resolves 'landed' (confirmed without error) or
   * 'expired' (it can never land). Throws CHAIN__FAILED_TO_SUBMIT when the node refuses it in
   * preflight or it lands with an error, and a retryable one when the outcome stays unknown.
   */
  async sendAndConfirm(signed: SignedTransaction, job: TransactionJob, signal: AbortSignal): Promise<ConfirmOutcome> {
    // Pending from before the first byte leaves: an abort during the send leaves it unresolved.
    this.pending.set(signed.signature, { signed, job });
    await this.sendFirst(signed, job, signal);
    return this.confirm(signed, job, { resumed: false }, signal);
  }

  /** Resolves the transactions of `action` that earlier calls left pending. */
  async settlePending(action: CrankAction, signal: AbortSignal): Promise<SettledPending> {
    const mine = [...this.pending.values()].filter((entry) => entry.job.action === action);
    const landed: LandedTransaction[] = [];
    const landedWithError: LandedTransaction[] = [];
    for (const { signed, job } of mine) {
      try {
        const outcome = await this.confirm(signed, job, { resumed: true }, signal);
        if (outcome === 'landed') landed.push({ signature: signed.signature, indices: job.indices });
      } catch (err) {
        // It landed with an error: resolved, and the failure belonged to the earlier call.
        if (!isBridgeError(err, 'CHAIN__FAILED_TO_SUBMIT') || err.retryable) throw err;
        const signature = signed.signature;
        this.logger.warn({ err, signature, action }, 'an earlier transaction of this action landed with an error');
        landedWithError.push({ signature, indices: job.indices });
      }
    }
    return { hadPending: mine.length > 0, landed, landedWithError };
  }

  private async sendFirst(signed: SignedTransaction, job: TransactionJob, signal: AbortSignal): Promise<void> {
    try {
      await this.rpc.sendTransaction(signed.wire, { skipPreflight: false, preflightCommitment: 'confirmed' }, signal);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      const preflight = preflightFailure(err);
      if (preflight !== undefined && isAlreadyProcessed(preflight.transactionError)) return;
      if (preflight !== undefined) {
        this.pending.delete(signed.signature);
        const failure = classifyTransactionError(preflight.transactionError);
        const index = this.failingIndex(failure.programError?.instructionIndex, job);
        throw submitFailure(job, { ...failure, ...index, reason: `${failure.reason}, refused in preflight` }, [], err);
      }
      if (isDefiniteSendRefusal(err)) {
        this.pending.delete(signed.signature);
        throw err;
      }
      const signature = signed.signature;
      this.logger.warn({ err, signature, action: job.action }, 'sendTransaction outcome unknown; watching the signature');
    }
  }

  private async confirm(
    signed: SignedTransaction,
    job: TransactionJob,
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
      if (Date.now() - lastBroadcast >= rebroadcastIntervalMs) {
        lastBroadcast = Date.now();
        await this.rebroadcast(signed, signal);
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
    const { signature } = signed;
    this.logger.warn({ signature, action: job.action, indices: job.indices }, 'blockhash expired before the transaction landed');
    return 'expired';
  }

  // An error seen only at `processed` may belong to a fork that dies; wait until it is confirmed.
  private outcomeOf(status: SignatureStatus, signed: SignedTransaction, job: TransactionJob): ConfirmOutcome | 'waiting' {
    const settled = status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized';
    if (!settled) return 'waiting';
    if (status.err !== null) {
      this.pending.delete(signed.signature);
      const failure = classifyTransactionError(status.err);
      const index = this.failingIndex(failure.programError?.instructionIndex, job);
      const reason = `${failure.reason}, landed in transaction ${signed.signature}`;
      throw submitFailure(job, { ...failure, ...index, signature: signed.signature, reason });
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

  private async rebroadcast(signed: SignedTransaction, signal: AbortSignal): Promise<void> {
    this.metrics.transactionRebroadcasts.inc({ chain: this.rpc.chain });
    try {
      await this.rpc.sendTransaction(signed.wire, { skipPreflight: true, preflightCommitment: 'confirmed' }, signal);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      this.logger.debug({ err, signature: signed.signature }, 'rebroadcast failed');
    }
  }

  private failingIndex(instructionIndex: number | undefined, job: TransactionJob): { index?: number } {
    const index = instructionIndex === undefined ? undefined : job.indices[instructionIndex];
    return index === undefined ? {} : { index };
  }

  private unresolved(signed: SignedTransaction, job: TransactionJob): Error {
    const seconds = Math.ceil(this.timing.confirmTimeoutMs / 1000);
    return submitFailure(job, {
      retryable: true,
      signature: signed.signature,
      reason:
        `transaction ${signed.signature} not confirmed within ${seconds} s; it may still land, ` +
        'and the next attempt resolves it before signing anything new',
    });
  }
}
