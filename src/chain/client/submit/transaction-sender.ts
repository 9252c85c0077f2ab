import type { SignatureStatus, TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { Logger } from '../../../log/logger.js';
import type { BridgeError } from '../../../errors.js';
import type { Metrics } from '../../../metrics/metrics.js';
import type { CrankAction } from '../../../domain.js';
import { sleep } from '../../../time.js';
import { isDefiniteSendRefusal } from '../../../failure-policy.js';
import type { AuthoritySigner } from '../../../signer/authority-signer.js';
import type { InFlightSettled, LandedTransaction } from '../../port/bridge-chains.js';
import { isAlreadyProcessed } from '../../program-errors.js';
import type { ChainRpc } from '../../rpc/chain-rpc.js';
import { preflightFailure } from '../../rpc/rpc-failure.js';
import type { SignedSignatures } from '../read/signed-signatures.js';
import { budgetInstructions, type ComputeBudget } from '../budget/compute-budget.js';
import type { NoncePool } from '../nonce/nonce-pool.js';
import { tipInstruction, type TipSettings } from '../budget/tip.js';
import { signTransaction, type LifetimeLead, type NonceBinding, type SignedTransaction } from './build/sign-transaction.js';
import { BlockhashLifetime } from './settle/blockhash-lifetime.js';
import type { Broadcast } from './send/broadcast.js';
import type { Pending, Reprice, SendingCore, TransactionLifetime } from './settle/lifetime.js';
import { NonceLifetime } from './settle/nonce-lifetime.js';
import { failedWith, landedOnChain, neverLands, submitFailure, type SendOutcome, type TransactionJob } from './settle/send-outcome.js';
import { everySendFailed, SendRecord, SignatureWatch } from './watch/signature-watch.js';

/**
 * Signs, sends and watches one chain's transactions, one at a time: each sent with preflight
 * and maxRetries 0, watched until it lands or can no longer land (./watch/signature-watch.ts), its
 * outcome a value (./settle/send-outcome.ts) for the batch-send loop (./send-batches.ts). Until when a
 * transaction can land is its lifetime's to say: a blockhash (./settle/blockhash-lifetime.ts) or a
 * durable nonce (./settle/nonce-lifetime.ts), picked when it is signed and sent (./settle/lifetime.ts).
 *
 * An attempt is one signed transaction's life: one that can no longer land ends it with a
 * retryable failure; the crank reads and plans again and its next attempt signs anew, up to
 * BRIDGE_CRANK_MAX_ATTEMPTS. A transaction that leaves `sendAndConfirm` without a known outcome
 * (the caller aborted, or no confirmation within `confirmTimeoutMs`) stays pending: the next
 * call for the same action first resolves it (`settlePending`) before anything new is signed.
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

export interface SettledPending {
  /** Some transaction of this action was pending: the caller must re-check the chain. */
  hadPending: boolean;
  landed: LandedTransaction[];
  /** Pending transactions that landed with a program error: nothing changed, but the fee was paid. */
  landedWithError: LandedTransaction[];
}

export interface TransactionSenderOptions {
  rpc: ChainRpc;
  signer: AuthoritySigner;
  /** The chain's nonce accounts; blockhash mode without them. */
  nonces?: NoncePool;
  metrics: Metrics;
  logger: Logger;
  timing?: SubmitTiming;
  /** Every signature this sender makes is added here (second-signer detection). */
  signed: SignedSignatures;
  /** BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS: what a void pays per unit. */
  voidMicroLamportsPerUnit?: number;
  /** The send-only paths beside the read endpoints, and the landing measured. */
  broadcast: Broadcast;
  /** A tip inside every transaction (BRIDGE_*_TIP_LAMPORTS), on top of the priority fee; none when absent. */
  tip?: TipSettings;
}

export class TransactionSender {
  /** By the first version's signature. */
  private readonly pending = new Map<string, Pending>();
  private readonly timing: SubmitTiming;
  private readonly watch: SignatureWatch;
  private readonly blockhash: BlockhashLifetime;
  private readonly nonce: NonceLifetime;

  /** Transactions whose outcome no call has learned yet (a deadline or an abort cut their wait). */
  get pendingCount(): number {
    return this.pending.size;
  }

  constructor(private readonly options: TransactionSenderOptions) {
    this.timing = options.timing ?? DEFAULT_SUBMIT_TIMING;
    this.watch = new SignatureWatch({ rpc: options.rpc, metrics: options.metrics, logger: options.logger, timing: this.timing });
    const core: SendingCore = {
      watch: this.watch,
      outcomeOf: (status, signed, pending) => this.outcomeOf(status, signed, pending),
      rebroadcast: (pending, signed, signal) => this.rebroadcast(pending, signed, signal),
    };
    this.blockhash = new BlockhashLifetime(options.rpc, core);
    this.nonce = new NonceLifetime(options, core);
  }

  /** How `action`'s next batch lands: in nonce mode behind AdvanceNonceAccount of its lane. */
  leadFor(action: CrankAction): LifetimeLead {
    const { nonces: pool, tip, signer } = this.options;
    const tipped = tip === undefined ? [] : [tipInstruction(signer.publicKey, tip)];
    // The pool's mode decides the lifetime of what is signed next; what was signed keeps its own.
    const lifetime = pool?.mode === 'nonce' ? this.nonce : this.blockhash;
    return lifetime.lead(action, tipped);
  }

  /** The lifetime of `signed`: what it was signed against says until when it can land. */
  lifetimeOf(signed: SignedTransaction): TransactionLifetime {
    return signed.nonce === undefined ? this.blockhash : this.nonce;
  }

  /**
   * Signs `instructions` behind `landing`'s leading instructions and the budget's
   * SetComputeUnitLimit and SetComputeUnitPrice: with a lane against `binding` (a re-sign) or the
   * lane's current value; otherwise against the latest blockhash.
   */
  async sign(
    instructions: readonly TransactionInstruction[],
    budget: ComputeBudget,
    lead: LifetimeLead,
    signal: AbortSignal,
    binding?: NonceBinding,
  ): Promise<SignedTransaction> {
    const lifetime = lead.lane === undefined && binding === undefined ? this.blockhash : this.nonce;
    const { blockhash, lastValidBlockHeight, nonce } = await lifetime.signingValue(lead, signal, binding);
    const leading = [...lead.leading, ...budgetInstructions(budget)];
    const { wire, signature } = await signTransaction(this.options.signer, [...leading, ...instructions], blockhash, lastValidBlockHeight);
    const encoded = bs58.encode(signature);
    this.options.signed.add(encoded);
    return { wire, signature: encoded, lastValidBlockHeight, budget, leading: leading.length, ...(nonce === undefined ? {} : { nonce }) };
  }

  /**
   * Sends `signed` and watches it until its outcome is known or `confirmTimeoutMs` passed
   * (`unknown`: it stays pending). Throws only for an abort, or the RPC failure of a send that
   * a node certainly refused to forward. `reprice` signs a higher-priced version, for a lifetime
   * that re-prices while it waits.
   */
  async sendAndConfirm(signed: SignedTransaction, job: TransactionJob, signal: AbortSignal, reprice?: Reprice): Promise<SendOutcome> {
    // Pending from before the first byte leaves: an abort during the send leaves it unresolved.
    const carried = this.options.broadcast.carried(signed, signal);
    const lifetime = this.lifetimeOf(signed);
    const pending: Pending = {
      signed,
      job,
      lifetime,
      sends: new SendRecord(),
      versions: [signed],
      carried,
      ...(reprice === undefined ? {} : { reprice }),
    };
    this.pending.set(signed.signature, pending);
    lifetime.sending(pending);
    const refused = await this.sendFirst(pending, signal);
    return refused ?? (await this.confirm(pending, { resumed: false }, signal));
  }

  /** Versions that may still land: every version of every transaction whose outcome is not known. */
  versionsInFlight(): number {
    return [...this.pending.values()].reduce((count, pending) => count + pending.versions.length, 0);
  }

  /**
   * Voids every transaction an earlier call left pending whose lifetime can be ended at will
   * (a durable nonce's: ./settle/nonce-lifetime.ts); the crank no longer wants them. What moved the
   * nonce, a version or the void, is learnt when the transaction is settled (the action's next
   * call, or `settleInFlight`). Returns how many were voided; a blockhash-mode one needs none
   * (it expires).
   */
  async voidPending(signal: AbortSignal): Promise<number> {
    let voided = 0;
    for (const pending of this.pending.values()) if (await pending.lifetime.void(pending, signal)) voided += 1;
    return voided;
  }

  /** Waits for the outcome of every transaction in flight (at most `confirmTimeoutMs` each, or until `signal`). */
  async settleInFlight(signal: AbortSignal): Promise<Omit<InFlightSettled, 'voided'>> {
    let landed = 0;
    let unresolved = 0;
    for (const pending of [...this.pending.values()]) {
      const outcome = await this.confirm(pending, { resumed: true }, signal);
      if (landedOnChain(outcome)) landed += 1;
      else if (outcome.kind === 'failed' && outcome.failure.context.outcome === 'unknown') unresolved += 1;
    }
    return { landed, unresolved };
  }

  /** Resolves the transactions of `action` that earlier calls left pending. */
  async settlePending(action: CrankAction, signal: AbortSignal): Promise<SettledPending> {
    const mine = [...this.pending.values()].filter((entry) => entry.job.action === action);
    const landed: LandedTransaction[] = [];
    const landedWithError: LandedTransaction[] = [];
    for (const entry of mine) {
      const { job } = entry;
      const outcome = await this.confirm(entry, { resumed: true }, signal);
      if (outcome.kind === 'landed') {
        landed.push({ signature: outcome.signature, indices: job.indices });
        continue;
      }
      const err = outcome.failure;
      // Still unknown: nothing new may be signed for this action until it is resolved.
      if (err.context.outcome === 'unknown') throw err;
      // Landed with an error: resolved, and the failure belonged to the earlier call. Expired: resolved, nothing landed.
      if (err.context.outcome !== 'landed_with_error') continue;
      const signature = err.context.signature ?? entry.signed.signature;
      this.options.logger.warn({ err, signature, action }, 'an earlier transaction of this action landed with an error');
      landedWithError.push({ signature, indices: job.indices });
    }
    return { hadPending: mine.length > 0, landed, landedWithError };
  }

  /** The transaction's outcome is known: it is no longer pending, and its lifetime learns what became of it. */
  private settle(pending: Pending, landed: boolean, voidLanded = false): void {
    this.pending.delete(pending.versions[0]!.signature);
    pending.lifetime.settled(pending, landed, voidLanded);
  }

  /** The outcome when preflight refused the transaction; undefined when it is to be watched. */
  private async sendFirst(pending: Pending, signal: AbortSignal): Promise<SendOutcome | undefined> {
    const { signed, job, sends } = pending;
    sends.sending();
    try {
      await this.options.rpc.sendTransaction(signed.wire, { skipPreflight: false, preflightCommitment: 'confirmed' }, signal);
      sends.wentThrough();
      this.sentOnPaths(pending, signed, true, signal);
      return undefined;
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      const preflight = preflightFailure(err);
      if (preflight !== undefined && isAlreadyProcessed(preflight.transactionError)) {
        this.sentOnPaths(pending, signed, true, signal);
        return undefined;
      }
      if (preflight !== undefined) {
        this.settle(pending, false);
        return failedWith(job, preflight.transactionError, { outcome: 'refused', where: 'refused in preflight', leading: signed.leading }, err);
      }
      if (isDefiniteSendRefusal(err)) {
        this.settle(pending, false);
        throw err;
      }
      sends.failedWith(err);
      this.options.logger.warn({ err, signature: signed.signature, action: job.action }, 'sendTransaction outcome unknown; watching the signature');
      this.sentOnPaths(pending, signed, false, signal);
      return undefined;
    }
  }

  /** The one sending loop: polls, rebroadcasts and the deadline; the lifetime says what a poll means. */
  private async confirm(pending: Pending, { resumed }: { resumed: boolean }, signal: AbortSignal): Promise<SendOutcome> {
    const { sends, lifetime } = pending;
    const { pollIntervalMs, rebroadcastIntervalMs, confirmTimeoutMs } = this.timing;
    const started = Date.now();
    // A resumed transaction may be long expired or never sent: check and rebroadcast at once.
    let lastBroadcast = resumed ? Number.NEGATIVE_INFINITY : started;
    let lastExpiryCheck = resumed ? Number.NEGATIVE_INFINITY : started;
    for (;;) {
      const checkExpiry = Date.now() - lastExpiryCheck >= rebroadcastIntervalMs;
      if (checkExpiry) lastExpiryCheck = Date.now();
      const outcome = await lifetime.poll(pending, checkExpiry, signal);
      if (outcome !== 'waiting') {
        const voidLanded = neverLands(outcome) && (await lifetime.voidLanded(pending, signal));
        this.settle(pending, landedOnChain(outcome), voidLanded);
        if (neverLands(outcome)) this.options.broadcast.notLanded(pending.carried, pending.versions);
        return outcome;
      }
      if (Date.now() - lastBroadcast >= this.watch.sendInterval(sends)) {
        lastBroadcast = Date.now();
        await this.rebroadcast(pending, pending.signed, signal);
        await lifetime.rebroadcast(pending, signal);
      }
      if (Date.now() - started >= confirmTimeoutMs) return { kind: 'failed', failure: this.unresolved(pending) };
      await sleep(pollIntervalMs, signal);
    }
  }

  /** `signed` to the read endpoints again, and to every send-only path. */
  private async rebroadcast(pending: Pending, signed: SignedTransaction, signal: AbortSignal): Promise<void> {
    const accepted = await this.watch.rebroadcast(signed, pending.sends, signal);
    this.sentOnPaths(pending, signed, accepted, signal);
  }

  /**
   * After the read endpoints answered a send of `signed`: the same bytes to the send-only
   * paths. Never before preflight passed (or its answer was lost after the simulation before
   * signing passed): a send-only path never simulates, and bytes a node's preflight refused
   * would land there with their error.
   */
  private sentOnPaths(pending: Pending, signed: SignedTransaction, accepted: boolean, signal: AbortSignal): void {
    const { broadcast } = this.options;
    broadcast.readEndpointsAnswered(pending.carried, signed, accepted);
    broadcast.sendOnPaths(pending.carried, signed, signal);
  }

  // An error seen only at `processed` may belong to a fork that dies; wait until it is confirmed.
  private outcomeOf(status: SignatureStatus, signed: SignedTransaction, pending: Pending): SendOutcome | 'waiting' {
    const settled = status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized';
    if (!settled) return 'waiting';
    const { job } = pending;
    this.watch.recordLanded(signed.budget);
    this.options.broadcast.landed(pending.carried, pending.versions, pending.versions.indexOf(signed), status.slot);
    const { signature } = signed;
    if (status.err !== null)
      return failedWith(job, status.err, {
        outcome: 'landed_with_error',
        where: `landed in transaction ${signature}`,
        signature,
        leading: signed.leading,
      });
    this.options.logger.info({ signature, action: job.action, indices: job.indices, chain: this.options.rpc.chain }, 'transaction landed');
    return { kind: 'landed', signature };
  }

  /**
   * No outcome within confirmTimeoutMs. When every send failed the reason says so, naming the
   * last failure (as an expiry does in blockhash mode): the cause an operator acts on.
   */
  private unresolved({ signed, job, sends }: Pending): BridgeError<'CHAIN__FAILED_TO_SUBMIT'> {
    const seconds = Math.ceil(this.timing.confirmTimeoutMs / 1000);
    const failedSends = everySendFailed(this.options.rpc.chain, sends);
    return submitFailure(job, {
      outcome: 'unknown',
      signature: signed.signature,
      reason:
        `transaction ${signed.signature} not confirmed within ${seconds} s${failedSends === undefined ? '' : `: ${failedSends}`}; it may still land, ` +
        'and the next attempt resolves it before signing anything new',
    });
  }
}
