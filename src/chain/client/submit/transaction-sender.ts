import type { PublicKey, SignatureStatus, TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { Logger } from '../../../log/logger.js';
import { BridgeError, isBridgeError, type SubmitOutcome } from '../../../errors.js';
import type { Metrics } from '../../../metrics/metrics.js';
import type { ChainSide, CrankAction } from '../../../domain.js';
import { sleep } from '../../../time.js';
import { isDefiniteSendRefusal } from '../../../failure-policy.js';
import type { AuthoritySigner } from '../../authority-signer.js';
import type { InFlightSettled, LandedTransaction } from '../../bridge-chains.js';
import { classifyTransactionError, isAlreadyProcessed, type DecodedProgramError } from '../../program-errors.js';
import type { ChainRpc } from '../../rpc/chain-rpc.js';
import { preflightFailure } from '../../rpc/rpc-failure.js';
import type { SignedSignatures } from '../read/authority-history.js';
import { budgetInstructions, learnFromLanding, LOADED_ACCOUNTS_EXCEEDED, type ComputeBudget, type ComputeCeilings } from '../budget/compute-budget.js';
import type { LandingPaths, Carried } from './landing-paths.js';
import type { LoadedAccounts } from '../budget/loaded-accounts.js';
import type { NoncePool, NonceValue } from '../nonce/nonce-pool.js';
import { advanceNonceInstruction } from '../../nonce-account.js';
import { signVoid, type SignedVoid } from '../nonce/nonce-void.js';
import { feeNote, type PriorityFeeBidder } from '../budget/priority-fee.js';
import { priceWithTip, tipInstruction, type TipSettings } from '../budget/tip.js';
import { signNextBatch, signTransaction, type Landing, type SignedBatch } from '../sign-transaction.js';
import { NO_EXPIRY, SendRecord, SignatureWatch, type NonceBinding, type SignedTransaction, type Watched } from './signature-watch.js';
import type { TrackerRef } from '../read/tracker-reader.js';

/**
 * An action's work sent as transactions, one at a time, and what became of each, as a value:
 * each transaction sized, priced and signed once (./sign-transaction.ts); sent with preflight
 * and maxRetries 0; watched until it lands or can no longer land (./signature-watch.ts). A
 * failure is a CHAIN__FAILED_TO_SUBMIT that says what became of it; it tells the fee bidder
 * whether the price was enough, and the action (./submit-votes.ts, ./submit-cleanups.ts) what to
 * send next. Whether anything is tried again is src/failure-policy.ts's decision.
 *
 * An attempt is one signed transaction's life: one that can no longer land ends it with a
 * retryable failure; the crank reads and plans again and its next attempt signs anew, up to
 * BRIDGE_CRANK_MAX_ATTEMPTS. A transaction that leaves `sendAndConfirm` without a known outcome
 * (the caller aborted, or no confirmation within `confirmTimeoutMs`) stays pending: the next
 * call for the same action first resolves it (`settlePending`) before anything new is signed.
 *
 * In nonce mode (./nonce-pool.ts) a transaction is signed against its action's nonce value
 * instead of a blockhash; it can no longer land once that value moved, and while it has not, a
 * re-priced version against the same value joins it (docs/chain-client.md, "Landing once:
 * durable nonces").
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

/** The submitter of `action` on the chain `side`: what every send of that action needs. */
export type SubmitterOn = (side: ChainSide, action: CrankAction) => BudgetedSubmitter & { metrics: Metrics };

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
 * The one batch-send loop of every action: sends `queue` in index order, as many leading items
 * per transaction as fit, one transaction at a time. A transaction that ran out of compute (the
 * program costs more than the simulation measured) is followed by batches half as large,
 * measured again. One that loaded more account data than its limit (refused, or landed fee-only
 * as SIMD-0191 has it: an account grew after the measurement) is measured and signed again once,
 * under the 64 MiB default (./loaded-accounts.ts re-reads the programs next cycle).
 */
export async function sendBatches<T extends BatchItem>(s: BudgetedSubmitter, items: readonly T[], outcomes: BatchOutcomes<T>, signal: AbortSignal): Promise<void> {
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
 * raises the chain's escalation step, and its failure names the price offered, what recent
 * slots cleared and the cap; one that landed (with an error or not) counts towards stepping it
 * down. What the chain showed of the instructions' cost moves the compute ceiling.
 */
async function sendSignedBatch(s: BudgetedSubmitter, batch: SignedBatch<BatchItem>, job: TransactionJob, signal: AbortSignal): Promise<SendOutcome> {
  const outcome = await s.sender.sendAndConfirm(batch.signed, job, signal, repricer(s, batch, job));
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
  // A transaction no node accepted says nothing about its price (an RPC outage, not congestion);
  // nor does a nonce that moved without it (a nonce-mode bid rises while it waits: `repricer`).
  if (err.context.sendsAccepted !== 0 && batch.signed.nonce === undefined) s.bidder.expired();
  const priced = new BridgeError('CHAIN__FAILED_TO_SUBMIT', err.context, { ...err.words, fee: feeNote(batch.bid) }, { cause: err.cause });
  return { kind: 'failed', failure: priced };
}

/**
 * Nonce mode: a version that has not landed after the chain's measured re-sign pace
 * (`LandingRecord.resignSlots`, ./landing-record.ts) is signed again at the
 * chain's next escalation step, against the same nonce value and with the same instructions
 * and limit, so that whichever version lands, the others cannot. Undefined when the bid would
 * not rise (it is at the cap).
 */
function repricer(s: BudgetedSubmitter, batch: SignedBatch<BatchItem>, job: TransactionJob): Reprice | undefined {
  const binding = batch.signed.nonce;
  if (binding === undefined) return undefined;
  const instructions = batch.items.map((item) => item.instruction);
  return async (current, signal) => {
    s.bidder.expired();
    const bid = await s.bidder.bid(instructions, signal);
    if (bid.microLamportsPerUnit <= current.budget.microLamportsPerUnit) return undefined;
    const budget = { ...current.budget, microLamportsPerUnit: bid.microLamportsPerUnit };
    return s.sender.sign(instructions, budget, batch.landing, signal, binding);
  };
}

/** Signs a higher-priced version of `current` against the same nonce value; undefined when there is none to sign. */
export type Reprice = (current: SignedTransaction, signal: AbortSignal) => Promise<SignedTransaction | undefined>;

export interface SettledPending {
  /** Some transaction of this action was pending: the caller must re-check the chain. */
  hadPending: boolean;
  landed: LandedTransaction[];
  /** Pending transactions that landed with a program error: nothing changed, but the fee was paid. */
  landedWithError: LandedTransaction[];
}

/**
 * A transaction whose outcome is not known yet. In nonce mode `signed` is the newest version and
 * `versions` every version signed against the same nonce value (the newest last), any of which
 * may be the one that lands.
 */
type Pending = Watched & {
  job: TransactionJob;
  versions: SignedTransaction[];
  carried: Carried;
  reprice?: Reprice;
  /** The newest slot seen once the newest version was sent: the re-sign pace counts from it. */
  pricedAtSlot?: number;
  /** At the latest poll a version was in a block (processed, not yet confirmed): no re-price while it settles. */
  inBlock?: boolean;
  /** Nonce mode: the void signed against the versions' value to make them unlandable (./nonce-void.ts). */
  void?: SignedVoid;
};

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
  landing: LandingPaths;
  /** A tip inside every transaction (BRIDGE_*_TIP_LAMPORTS); none when absent. */
  tip?: TipSettings;
}


/** Signs, sends and confirms one transaction at a time on one chain. */
export class TransactionSender {
  /** By the first version's signature. */
  private readonly pending = new Map<string, Pending>();
  private readonly timing: SubmitTiming;
  private readonly watch: SignatureWatch;

  /** Transactions whose outcome no call has learned yet (a deadline or an abort cut their wait). */
  get pendingCount(): number {
    return this.pending.size;
  }

  constructor(private readonly options: TransactionSenderOptions) {
    this.timing = options.timing ?? DEFAULT_SUBMIT_TIMING;
    this.watch = new SignatureWatch({ rpc: options.rpc, metrics: options.metrics, logger: options.logger, timing: this.timing });
  }

  /** How `action`'s next batch lands: in nonce mode behind AdvanceNonceAccount of its lane. */
  landingFor(action: CrankAction): Landing {
    const { nonces: pool, tip, signer } = this.options;
    const tipped = tip === undefined ? [] : [tipInstruction(signer.publicKey, tip)];
    if (pool?.mode !== 'nonce') return { leading: tipped };
    const lane = pool.laneOf(action);
    return { leading: [advanceNonceInstruction(lane, signer.publicKey), ...tipped], lane };
  }

  /**
   * Signs `instructions` behind `landing`'s leading instructions and the budget's
   * SetComputeUnitLimit and SetComputeUnitPrice: with a lane against `binding` (a re-sign) or the
   * lane's current value; otherwise against the latest blockhash.
   */
  async sign(
    instructions: readonly TransactionInstruction[],
    budget: ComputeBudget,
    landing: Landing,
    signal: AbortSignal,
    binding?: NonceBinding,
  ): Promise<SignedTransaction> {
    const priced = priceWithTip(budget, this.options.tip);
    const nonce = binding ?? (await this.currentNonce(landing.lane, signal));
    const { blockhash, lastValidBlockHeight } =
      nonce === undefined ? await this.options.rpc.getLatestBlockhash('confirmed', signal) : { blockhash: nonce.nonce, lastValidBlockHeight: NO_EXPIRY };
    const leading = [...landing.leading, ...budgetInstructions(priced)];
    const { wire, signature } = await signTransaction(this.options.signer, [...leading, ...instructions], blockhash, lastValidBlockHeight);
    const encoded = bs58.encode(signature);
    this.options.signed.add(encoded);
    return { wire, signature: encoded, lastValidBlockHeight, budget: priced, leading: leading.length, ...(nonce === undefined ? {} : { nonce }) };
  }

  private async currentNonce(lane: PublicKey | undefined, signal: AbortSignal): Promise<NonceBinding | undefined> {
    const pool = this.options.nonces;
    // A lane comes only from the pool (`landingFor`).
    if (lane === undefined || pool === undefined) return undefined;
    return { lane, ...(await pool.current(lane, signal)) };
  }

  /**
   * Sends `signed` and watches it until its outcome is known or `confirmTimeoutMs` passed
   * (`unknown`: it stays pending). Throws only for an abort, or the RPC failure of a send that
   * a node certainly refused to forward.
   */
  async sendAndConfirm(signed: SignedTransaction, job: TransactionJob, signal: AbortSignal, reprice?: Reprice): Promise<SendOutcome> {
    // Pending from before the first byte leaves: an abort during the send leaves it unresolved.
    const carried = this.options.landing.carried(signed);
    const pending: Pending = { signed, job, sends: new SendRecord(), versions: [signed], carried, ...(reprice === undefined ? {} : { reprice }) };
    if (signed.nonce !== undefined) pending.pricedAtSlot = signed.nonce.slot;
    this.pending.set(signed.signature, pending);
    if (signed.nonce !== undefined) this.options.nonces?.moves.sent(signed.nonce.lane.toBase58(), signed.nonce.nonce);
    const refused = await this.sendFirst(pending, signal);
    if (signed.nonce !== undefined) pending.pricedAtSlot = Math.max(signed.nonce.slot, this.options.rpc.slotFloor() ?? 0);
    return refused ?? (await this.confirm(pending, { resumed: false }, signal));
  }

  /** Versions that may still land: every version of every transaction whose outcome is not known. */
  versionsInFlight(): number {
    return [...this.pending.values()].reduce((count, pending) => count + pending.versions.length, 0);
  }

  /**
   * Voids every nonce-mode transaction an earlier call left pending: the crank no longer wants
   * it (a replaced plan, a pool change, a switch to blockhash mode, shutdown), so it advances
   * that nonce itself (./nonce-void.ts). What moved it, a version or the void, is learnt when
   * the transaction is settled (the action's next call, or `settleInFlight`). Returns how many
   * were voided; a blockhash-mode one needs none (it expires).
   */
  async voidPending(signal: AbortSignal): Promise<number> {
    let voided = 0;
    for (const pending of this.pending.values()) {
      const binding = pending.signed.nonce;
      if (binding === undefined || pending.void !== undefined) continue;
      try {
        await this.sendVoid(pending, binding, signal);
        voided += 1;
      } catch (err) {
        if (signal.aborted) throw signal.reason;
        // Signing failed (the key service): the next read voids it again; until then it is still in flight.
        this.options.logger.warn({ err, action: pending.job.action, lane: binding.lane.toBase58() }, 'a transaction the crank no longer wants could not be voided; the next read tries again');
      }
    }
    return voided;
  }

  /** Waits for the outcome of every transaction in flight (at most `confirmTimeoutMs` each, or until `signal`). */
  async settleInFlight(signal: AbortSignal): Promise<Omit<InFlightSettled, 'voided'>> {
    let landed = 0;
    let unresolved = 0;
    for (const pending of [...this.pending.values()]) {
      const outcome = await this.confirm(pending, { resumed: true }, signal);
      if (outcome.kind === 'landed' || outcome.failure.context.outcome === 'landed_with_error') landed += 1;
      else if (outcome.failure.context.outcome === 'unknown') unresolved += 1;
    }
    return { landed, unresolved };
  }

  private async sendVoid(pending: Pending, binding: NonceBinding, signal: AbortSignal): Promise<void> {
    const { rpc, signer, signed, nonces, logger } = this.options;
    const voided = await signVoid({ signer, binding, microLamportsPerUnit: this.options.voidMicroLamportsPerUnit ?? 0 });
    signed.add(voided.signature);
    nonces?.moves.sent(binding.lane.toBase58(), binding.nonce);
    pending.void = voided;
    logger.info(
      { chain: rpc.chain, action: pending.job.action, lane: binding.lane.toBase58(), void: voided.signature, versions: pending.versions.map((version) => version.signature) },
      'a transaction the crank no longer wants is voided: this server advances its nonce itself, so that none of its versions can land after that',
    );
    await this.broadcastVoid(voided, signal);
  }

  private async broadcastVoid(voided: SignedVoid, signal: AbortSignal): Promise<void> {
    try {
      await this.options.rpc.sendTransaction(voided.wire, { skipPreflight: true, preflightCommitment: 'confirmed' }, signal);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      this.options.logger.debug({ err, signature: voided.signature }, 'void send failed; sent again with the next rebroadcast');
    }
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

  /**
   * The transaction's outcome is known: it is no longer pending, and the nonce it was signed
   * against (if any) learns whether one of its versions moved it.
   */
  private settle(pending: Pending, landed: boolean, voidLanded = false): void {
    this.pending.delete(pending.versions[0]!.signature);
    const binding = pending.signed.nonce;
    if (binding === undefined) return;
    const moves = this.options.nonces?.moves;
    moves?.settled(binding.lane.toBase58(), binding.nonce, landed);
    if (pending.void !== undefined) moves?.settled(binding.lane.toBase58(), binding.nonce, voidLanded);
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

  private async confirm(pending: Pending, { resumed }: { resumed: boolean }, signal: AbortSignal): Promise<SendOutcome> {
    const { job, sends } = pending;
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
        const voidLanded = outcome.kind === 'failed' && outcome.failure.context.outcome === 'not_landed' && (await this.voidLanded(pending, signal));
        this.settle(pending, outcome.kind === 'landed' || outcome.failure.context.outcome === 'landed_with_error', voidLanded);
        if (outcome.kind === 'failed' && outcome.failure.context.outcome === 'not_landed') this.options.landing.notLanded(pending.versions);
        return outcome;
      }
      if (Date.now() - lastBroadcast >= this.watch.sendInterval(sends)) {
        lastBroadcast = Date.now();
        await this.rebroadcast(pending, pending.signed, signal);
        if (pending.void !== undefined) await this.broadcastVoid(pending.void, signal);
      }
      if (Date.now() - started >= confirmTimeoutMs) return { kind: 'failed', failure: this.unresolved(pending.signed, job) };
      await sleep(pollIntervalMs, signal);
    }
  }

  private async pollOutcome(pending: Pending, checkExpiry: boolean, signal: AbortSignal): Promise<SendOutcome | 'waiting'> {
    if (pending.signed.nonce !== undefined) return this.pollNonceOutcome(pending, pending.signed.nonce, checkExpiry, signal);
    const { signed, job } = pending;
    const recent = await this.watch.poll(signed.signature, false, signal);
    const seen = recent.kind === 'found' ? recent : await this.watch.afterAbsence(pending, recent, checkExpiry, signal);
    if (seen.kind === 'found') return this.outcomeOf(seen.status, signed, pending);
    if (seen.kind !== 'expired') return 'waiting';
    return { kind: 'failed', failure: submitFailure(job, { outcome: 'not_landed', reason: seen.reason, sendsAccepted: seen.sendsAccepted }) };
  }

  /**
   * Nonce mode: any version found settled is the outcome. Otherwise, at each expiry check, the
   * lane's value decides: still `binding.nonce`, the versions can land (and a higher price is
   * signed once the measured re-sign pace passed); moved, they never can, and a status read from a
   * view at or past the move says whether one of them is what moved it.
   */
  private async pollNonceOutcome(pending: Pending, binding: NonceBinding, checkNonce: boolean, signal: AbortSignal): Promise<SendOutcome | 'waiting'> {
    const found = await this.foundVersion(pending, false, signal);
    if (found !== undefined) return found;
    if (!checkNonce && !this.repriceDue(pending, this.options.rpc.slotFloor())) return 'waiting';
    const now = await this.laneValue(binding, signal);
    if (now === undefined) return 'waiting';
    if ('gone' in now) return this.laneGone(pending, binding, now, signal);
    if (now.nonce === binding.nonce) {
      if (pending.void === undefined) await this.repriceIfDue(pending, now.slot, signal);
      return 'waiting';
    }
    const final = await this.finalVersions(pending, now.slot, signal);
    if (final !== 'absent') return final;
    const { lane } = binding;
    if (pending.void !== undefined) {
      const reason = `voided: this server advanced nonce ${lane.toBase58()} from ${binding.nonce} (${pending.void.signature}); none of the ${pending.versions.length} version(s) landed`;
      return { kind: 'failed', failure: submitFailure(pending.job, { outcome: 'not_landed', reason, sendsAccepted: pending.sends.accepted }) };
    }
    this.options.logger.warn(
      { lane: lane.toBase58(), action: pending.job.action, indices: pending.job.indices, versions: pending.versions.map((version) => version.signature) },
      'the nonce moved without any version of this transaction landing: another transaction signed with this key advanced it; the next attempt re-reads the trackers',
    );
    const reason = `nonce ${lane.toBase58()} moved from ${binding.nonce} without any of the ${pending.versions.length} version(s) signed against it landing`;
    return { kind: 'failed', failure: submitFailure(pending.job, { outcome: 'not_landed', reason, sendsAccepted: pending.sends.accepted }) };
  }

  /** The outcome of the first version whose status is found and settled; undefined while none is. */
  private async foundVersion(pending: Pending, searchTransactionHistory: boolean, signal: AbortSignal): Promise<SendOutcome | undefined> {
    // As of this poll: a version whose block a fork dropped is re-priced again.
    pending.inBlock = false;
    for (const version of pending.versions) {
      const poll = await this.watch.poll(version.signature, searchTransactionHistory, signal);
      if (poll.kind !== 'found') continue;
      const outcome = this.outcomeOf(poll.status, version, pending);
      if (outcome !== 'waiting') return outcome;
      pending.inBlock = true;
    }
    return undefined;
  }

  /**
   * After the nonce moved (seen at `movedBy`): a version found settled is the outcome; `absent`
   * only when every version's status read (a history search where some endpoint keeps history,
   * else the status cache) comes from a view at or past `movedBy`, since a lagging node may not
   * have the version that moved it yet; `waiting` otherwise.
   */
  private async finalVersions(pending: Pending, movedBy: number, signal: AbortSignal): Promise<SendOutcome | 'waiting' | 'absent'> {
    const searchHistory = this.options.rpc.hasHistory() !== false;
    let decided = true;
    for (const version of pending.versions) {
      const poll = await this.watch.poll(version.signature, searchHistory, signal);
      if (poll.kind === 'found') {
        const outcome = this.outcomeOf(poll.status, version, pending);
        if (outcome !== 'waiting') return outcome;
      }
      if (poll.kind !== 'absent' || poll.slot < movedBy) decided = false;
    }
    return decided ? 'absent' : 'waiting';
  }

  /** The lane's value now; `gone` when it is no longer this authority's nonce account; undefined when the read failed. */
  private async laneValue(binding: NonceBinding, signal: AbortSignal): Promise<NonceValue | { gone: BridgeError<'CHAIN__INVALID_NONCE_ACCOUNT'>; slot: number } | undefined> {
    try {
      return await this.options.nonces!.current(binding.lane, signal);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (isBridgeError(err, 'CHAIN__INVALID_NONCE_ACCOUNT')) return { gone: err, slot: err.context.slot };
      this.options.logger.debug({ err, lane: binding.lane.toBase58() }, 'nonce read failed');
      return undefined;
    }
  }

  /**
   * The lane was closed, re-authorized or overwritten while versions waited: none of them can
   * land on it any more (a closed account's next life has another value); once the status reads
   * from a view at or past that read find none landed, the attempt ends not landed, naming the
   * account and the fix, and the next cycle's read takes the lane out of use.
   */
  private async laneGone(pending: Pending, binding: NonceBinding, now: { gone: BridgeError<'CHAIN__INVALID_NONCE_ACCOUNT'>; slot: number }, signal: AbortSignal): Promise<SendOutcome | 'waiting'> {
    const final = await this.finalVersions(pending, now.slot, signal);
    if (final !== 'absent') return final;
    const reason = `${now.gone.message}; none of the ${pending.versions.length} version(s) signed against ${binding.nonce} landed`;
    return { kind: 'failed', failure: submitFailure(pending.job, { outcome: 'not_landed', reason, sendsAccepted: pending.sends.accepted }) };
  }

  /** Whether the transaction's void is what moved its nonce. */
  private async voidLanded(pending: Pending, signal: AbortSignal): Promise<boolean> {
    if (pending.void === undefined) return false;
    const poll = await this.watch.poll(pending.void.signature, this.options.rpc.hasHistory() !== false, signal);
    return poll.kind === 'found' && poll.status.confirmationStatus !== 'processed';
  }

  /** A version has waited unlanded for the chain's measured re-sign pace as of `slot`. */
  private repriceDue(pending: Pending, slot: number | undefined): boolean {
    if (pending.reprice === undefined || pending.inBlock === true || slot === undefined) return false;
    return slot - (pending.pricedAtSlot ?? slot) >= this.options.landing.landing.resignSlots();
  }

  private async repriceIfDue(pending: Pending, slot: number, signal: AbortSignal): Promise<void> {
    if (pending.reprice === undefined || !this.repriceDue(pending, slot)) return;
    pending.pricedAtSlot = slot;
    const next = await pending.reprice(pending.signed, signal);
    if (next === undefined) return;
    const { chain } = this.options.rpc;
    this.options.metrics.transactionResigns.inc({ chain, reason: 'repriced' });
    this.options.logger.info(
      { signature: next.signature, replaces: pending.signed.signature, price: next.budget.microLamportsPerUnit, action: pending.job.action, chain },
      'not landed yet: signed again one escalation step higher against the same nonce value',
    );
    pending.signed = next;
    pending.versions.push(next);
    await this.rebroadcast(pending, next, signal);
    pending.pricedAtSlot = Math.max(slot, this.options.rpc.slotFloor() ?? slot);
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
    const { landing } = this.options;
    landing.readEndpointsAnswered(pending.carried, signed, accepted);
    landing.sendOnPaths(pending.carried, signed, signal);
  }

  // An error seen only at `processed` may belong to a fork that dies; wait until it is confirmed.
  private outcomeOf(status: SignatureStatus, signed: SignedTransaction, pending: Pending): SendOutcome | 'waiting' {
    const settled = status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized';
    if (!settled) return 'waiting';
    const { job } = pending;
    this.watch.recordLanded(signed.budget);
    this.options.landing.landed(pending.carried, pending.versions, pending.versions.indexOf(signed), status.slot);
    const { signature } = signed;
    if (status.err !== null) return failedWith(job, status.err, { outcome: 'landed_with_error', where: `landed in transaction ${signature}`, signature, leading: signed.leading });
    this.options.logger.info({ signature, action: job.action, indices: job.indices, chain: this.options.rpc.chain }, 'transaction landed');
    return { kind: 'landed', signature };
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
 * The outcome of a transaction error (a preflight refusal's, or a landed transaction's): what it
 * says (program-errors.ts), at which entry, and where it happened.
 */
function failedWith(
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
