import type { TransactionInstruction } from '@solana/web3.js';
import type { Logger } from '../../../../log/logger.js';
import type { CrankAction } from '../../../../domain.js';
import { advanceNonceInstruction } from '../../../nonce-account.js';
import { isBridgeError, type BridgeError } from '../../../../errors.js';
import type { Metrics } from '../../../../metrics/metrics.js';
import type { AuthoritySigner } from '../../../../signer/authority-signer.js';
import type { ChainRpc } from '../../../rpc/chain-rpc.js';
import type { SignedSignatures } from '../../read/signed-signatures.js';
import type { NoncePool, NonceValue } from '../../nonce/nonce-pool.js';
import { signVoid, type SignedVoid } from './nonce-void.js';
import type { LifetimeLead } from '../build/sign-transaction.js';
import { acceptedAnywhere, sendSlotOf, type Broadcast } from '../send/broadcast.js';
import type { LifetimeValue, Pending, SendingCore, TransactionLifetime } from './lifetime.js';
import { submitFailure, type SendOutcome } from './send-outcome.js';
import type { NonceBinding } from '../build/sign-transaction.js';
import { NO_EXPIRY } from '../watch/signature-watch.js';

/**
 * The durable-nonce lifetime (../../nonce/nonce-pool.ts): a transaction led by AdvanceNonceAccount
 * of its action's lane and signed against that nonce's value can land until the value moves, and
 * no block height ends it. While it has not
 * moved, a re-priced version against the same value joins it at the chain's measured re-sign
 * pace; whichever version lands, the others cannot. The crank voids one it no longer wants by
 * advancing the nonce itself (./nonce-void.ts). docs/chain-client.md, "Landing once:
 * durable nonces".
 */

export interface NonceLifetimeOptions {
  rpc: ChainRpc;
  signer: AuthoritySigner;
  nonces?: NoncePool;
  metrics: Metrics;
  logger: Logger;
  signed: SignedSignatures;
  voidMicroLamportsPerUnit?: number;
  broadcast: Broadcast;
}

type LaneRead = NonceValue | { gone: BridgeError<'CHAIN__INVALID_NONCE_ACCOUNT'>; slot: number };

export class NonceLifetime implements TransactionLifetime {
  // A nonce that moved without the transaction says nothing of its price: its bid rose while it waited.
  readonly notLandedIsOutbid = false;

  constructor(
    private readonly options: NonceLifetimeOptions,
    private readonly core: SendingCore,
  ) {}

  /** Behind AdvanceNonceAccount of the action's lane: a nonce transaction's first instruction. */
  lead(action: CrankAction, tipped: TransactionInstruction[]): LifetimeLead {
    const lane = this.options.nonces!.laneOf(action);
    return { leading: [advanceNonceInstruction(lane, this.options.signer.publicKey), ...tipped], lane };
  }

  /** `binding` for a re-sign; otherwise the lane's current value (a lane comes only from the pool). */
  async signingValue(lead: LifetimeLead, signal: AbortSignal, binding?: NonceBinding): Promise<LifetimeValue> {
    const nonce = binding ?? { lane: lead.lane!, ...(await this.options.nonces!.current(lead.lane!, signal)) };
    return { blockhash: nonce.nonce, lastValidBlockHeight: NO_EXPIRY, nonce };
  }

  sending(pending: Pending): void {
    const binding = pending.signed.nonce!;
    this.options.nonces?.moves.sent(binding.lane.toBase58(), binding.nonce);
  }

  /**
   * Any version found settled is the outcome. Otherwise, at each expiry check, the lane's value
   * decides: still `binding.nonce`, the versions can land (and a higher price is signed once the
   * measured re-sign pace passed); moved, they never can, and a status read from a view at or
   * past the move says whether one of them is what moved it.
   */
  async poll(pending: Pending, checkNonce: boolean, signal: AbortSignal): Promise<SendOutcome | 'waiting'> {
    const binding = pending.signed.nonce!;
    const found = await this.foundVersion(pending, false, signal);
    if (found !== undefined) return found;
    if (!checkNonce && !this.repriceDue(pending)) return 'waiting';
    const now = await this.laneValue(binding, signal);
    if (now === undefined) return 'waiting';
    if ('gone' in now) return this.laneGone(pending, binding, now, signal);
    if (now.nonce === binding.nonce) {
      if (pending.void === undefined) await this.repriceIfDue(pending, signal);
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
      {
        lane: lane.toBase58(),
        action: pending.job.action,
        indices: pending.job.indices,
        versions: pending.versions.map((version) => version.signature),
      },
      'the nonce moved without any version of this transaction landing: another transaction signed with this key advanced it; the next attempt re-reads the trackers',
    );
    const reason = `nonce ${lane.toBase58()} moved from ${binding.nonce} without any of the ${pending.versions.length} version(s) signed against it landing`;
    return { kind: 'failed', failure: submitFailure(pending.job, { outcome: 'not_landed', reason, sendsAccepted: pending.sends.accepted }) };
  }

  async rebroadcast(pending: Pending, signal: AbortSignal): Promise<void> {
    if (pending.void !== undefined) await this.broadcastVoid(pending, pending.void, signal);
  }

  /**
   * The crank no longer wants the transaction (a replaced plan, a pool change, a switch to
   * blockhash mode, shutdown): it advances that nonce itself (./nonce-void.ts). What moved
   * it, a version or the void, is learnt when the transaction is settled. False when it was
   * voided before, or signing failed (the next read tries again).
   */
  async void(pending: Pending, signal: AbortSignal): Promise<boolean> {
    const binding = pending.signed.nonce!;
    if (pending.void !== undefined) return false;
    try {
      await this.sendVoid(pending, binding, signal);
      return true;
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      // Signing failed (the key service): the next read voids it again; until then it is still in flight.
      this.options.logger.warn(
        { err, action: pending.job.action, lane: binding.lane.toBase58() },
        'a transaction the crank no longer wants could not be voided; the next read tries again',
      );
      return false;
    }
  }

  async voidLanded(pending: Pending, signal: AbortSignal): Promise<boolean> {
    if (pending.void === undefined) return false;
    const poll = await this.core.watch.poll(pending.void.signature, this.options.rpc.hasHistory() !== false, signal);
    return poll.kind === 'found' && poll.status.confirmationStatus !== 'processed';
  }

  /** The nonce the transaction was signed against learns whether one of its versions (or its void) moved it. */
  settled(pending: Pending, landed: boolean, voidLanded: boolean): void {
    const binding = pending.signed.nonce!;
    const moves = this.options.nonces?.moves;
    moves?.settled(binding.lane.toBase58(), binding.nonce, landed);
    if (pending.void !== undefined) moves?.settled(binding.lane.toBase58(), binding.nonce, voidLanded);
  }

  private async sendVoid(pending: Pending, binding: NonceBinding, signal: AbortSignal): Promise<void> {
    const { rpc, signer, signed, nonces, logger } = this.options;
    const voided = await signVoid({ signer, binding, microLamportsPerUnit: this.options.voidMicroLamportsPerUnit ?? 0 });
    signed.add(voided.signature);
    nonces?.moves.sent(binding.lane.toBase58(), binding.nonce);
    pending.void = voided;
    logger.info(
      {
        chain: rpc.chain,
        action: pending.job.action,
        lane: binding.lane.toBase58(),
        void: voided.signature,
        versions: pending.versions.map((version) => version.signature),
      },
      'a transaction the crank no longer wants is voided: this server advances its nonce itself, so that none of its versions can land after that',
    );
    await this.broadcastVoid(pending, voided, signal);
  }

  /** The void to the read endpoints and every send-only path, as its versions go: with each rebroadcast until the nonce moves. */
  private async broadcastVoid(pending: Pending, voided: SignedVoid, signal: AbortSignal): Promise<void> {
    this.options.broadcast.sendOnPaths(pending.carried, voided, signal);
    try {
      await this.options.rpc.sendTransaction(voided.wire, { skipPreflight: true, preflightCommitment: 'confirmed' }, signal);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      this.options.logger.debug({ err, signature: voided.signature }, 'void send failed; sent again with the next rebroadcast');
    }
  }

  /** The outcome of the first version whose status is found and settled; undefined while none is. */
  private async foundVersion(pending: Pending, searchTransactionHistory: boolean, signal: AbortSignal): Promise<SendOutcome | undefined> {
    // As of this poll: a version whose block a fork dropped is re-priced again.
    pending.inBlock = false;
    for (const version of pending.versions) {
      const poll = await this.core.watch.poll(version.signature, searchTransactionHistory, signal);
      if (poll.kind !== 'unavailable') pending.headSlot = Math.max(pending.headSlot ?? poll.slot, poll.slot);
      if (poll.kind !== 'found') continue;
      const outcome = this.core.outcomeOf(poll.status, version, pending);
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
      const poll = await this.core.watch.poll(version.signature, searchHistory, signal);
      if (poll.kind === 'found') {
        const outcome = this.core.outcomeOf(poll.status, version, pending);
        if (outcome !== 'waiting') return outcome;
      }
      if (poll.kind !== 'absent' || poll.slot < movedBy) decided = false;
    }
    return decided ? 'absent' : 'waiting';
  }

  /** The lane's value now; `gone` when it is no longer this authority's nonce account; undefined when the read failed. */
  private async laneValue(binding: NonceBinding, signal: AbortSignal): Promise<LaneRead | undefined> {
    try {
      return await this.options.nonces!.current(binding.lane, signal, binding.nonce);
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
  private async laneGone(
    pending: Pending,
    binding: NonceBinding,
    now: { gone: BridgeError<'CHAIN__INVALID_NONCE_ACCOUNT'>; slot: number },
    signal: AbortSignal,
  ): Promise<SendOutcome | 'waiting'> {
    const final = await this.finalVersions(pending, now.slot, signal);
    if (final !== 'absent') return final;
    const reason = `${now.gone.message}; none of the ${pending.versions.length} version(s) signed against ${binding.nonce} landed`;
    return { kind: 'failed', failure: submitFailure(pending.job, { outcome: 'not_landed', reason, sendsAccepted: pending.sends.accepted }) };
  }

  /**
   * The newest version has waited unlanded for the chain's measured re-sign pace, counted in
   * processed slots: from its send slot (the first version's, ../send/broadcast.ts) or the head
   * when it was signed (a re-priced one), to the head the latest status poll answered at. Never
   * while no node or send-only path accepted it: a send refused at the HTTP or JSON-RPC level
   * is a failed send, which says nothing of the price (it is re-sent at the same one).
   */
  private repriceDue(pending: Pending): boolean {
    const head = pending.headSlot;
    if (pending.reprice === undefined || pending.inBlock === true || head === undefined) return false;
    if (!acceptedAnywhere(pending.carried, pending.signed.signature)) return false;
    const from = pending.pricedAtSlot ?? sendSlotOf(pending.carried) ?? head;
    return head - from >= this.options.broadcast.record.resignSlots();
  }

  /**
   * Nonce mode's re-price: a version that has not landed after the chain's measured re-sign pace
   * (`LandingRecord.resignSlots`, ../send/landing-record.ts) is signed again at the chain's next
   * escalation step, against the same nonce value and with the same instructions and limit.
   */
  private async repriceIfDue(pending: Pending, signal: AbortSignal): Promise<void> {
    if (pending.reprice === undefined || !this.repriceDue(pending)) return;
    pending.pricedAtSlot = pending.headSlot;
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
    await this.core.rebroadcast(pending, next, signal);
  }
}
