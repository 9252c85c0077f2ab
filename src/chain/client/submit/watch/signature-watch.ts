import type { SignatureStatus } from '@solana/web3.js';
import type { Logger } from '../../../../log/logger.js';
import { describeError, isBridgeError } from '../../../../errors.js';
import type { Metrics } from '../../../../metrics/metrics.js';
import { type ChainSide, type CrankAction, chainName } from '../../../../domain.js';
import { boundText } from '../../../../text.js';
import { LAMPORTS_PER_SIGNATURE, priorityFeeLamports } from '../../../fee-rate.js';
import type { ChainRpc } from '../../../rpc/chain-rpc.js';
import type { ChainHeight, SignatureStatusAt } from '../../../rpc/rpc-answers.js';
import { isHistoryUnavailable, shortRpcFailure } from '../../../rpc/rpc-failure.js';
import type { ComputeBudget } from '../../budget/compute-budget.js';
import type { SignedTransaction } from '../build/sign-transaction.js';

/**
 * A signed transaction while its outcome is not known, without websockets: status polls
 * (getSignatureStatuses), rebroadcasts of the same bytes at a pace that backs off while sends
 * fail, and the expiry decision. The transaction can no longer land only when the block height
 * has passed its lastValidBlockHeight and a status read from a view at or past the slot where it
 * did finds nothing (docs/chain-client.md, "Which slot anchors each decision"): a history
 * search, or without history the status cache while it still covers the transaction.
 */

/** A durable-nonce transaction's lastValidBlockHeight: no block height ends it. */
export const NO_EXPIRY = Number.MAX_SAFE_INTEGER;

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

/** What became of the sends of one signed transaction: for the reason when it never lands, and the pace of the next send. */
export class SendRecord {
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

/** A watched transaction: its sends, what it carries (for the logs), and the view in which the block height had passed lastValidBlockHeight. */
export interface Watched {
  signed: SignedTransaction;
  sends: SendRecord;
  job: { action: CrankAction; indices: number[] };
  expiredIn?: ChainHeight;
}

/** A status poll's answer; `slot` is its context slot, the processed bank's (the head). */
export type Poll = { kind: 'found'; status: SignatureStatus; slot: number } | { kind: 'absent'; slot: number } | { kind: 'unavailable' };

/** After a poll that found nothing: a status found after all, still waiting, or expired (with why it never landed). */
export type Absence = Poll | { kind: 'waiting' } | { kind: 'expired'; reason: string; sendsAccepted: number };

export interface SignatureWatchOptions {
  rpc: ChainRpc;
  metrics: Metrics;
  logger: Logger;
  timing: { pollIntervalMs: number; rebroadcastIntervalMs: number };
}

/**
 * The counters of landing transactions on `chain` at 0 from the start, with every kind
 * `recordLanded` uses: a series that appears only with its first event leaves a panel at
 * "No data" and an increase() blind to that event (deploy/grafana).
 */
export function zeroLandingCounters(chain: ChainSide, metrics: Metrics): void {
  metrics.transactionRebroadcasts.inc({ chain }, 0);
  for (const reason of ['expired', 'repriced']) metrics.transactionResigns.inc({ chain, reason }, 0);
  for (const kind of ['base', 'priority']) metrics.feesPaid.inc({ chain, kind }, 0);
  for (const kind of ['requested', 'used']) metrics.computeUnits.inc({ chain, kind }, 0);
}

export class SignatureWatch {
  constructor(private readonly options: SignatureWatchOptions) {}

  async poll(signature: string, searchTransactionHistory: boolean, signal: AbortSignal): Promise<Poll> {
    let answer: SignatureStatusAt;
    try {
      answer = await this.options.rpc.getSignatureStatus(signature, { searchTransactionHistory }, signal);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      // Without history anywhere the search is not possible: the caller falls back to the status cache.
      if (!isHistoryUnavailable(err)) this.options.logger.debug({ err, signature }, 'signature status poll failed');
      return { kind: 'unavailable' };
    }
    return answer.status === null ? { kind: 'absent', slot: answer.slot } : { kind: 'found', status: answer.status, slot: answer.slot };
  }

  /** What a poll that did not find `watched` (`recent`) means, checking the block height when `checkExpiry`. */
  async afterAbsence(watched: Watched, recent: Poll, checkExpiry: boolean, signal: AbortSignal): Promise<Absence> {
    const { signed, job, sends } = watched;
    if (watched.expiredIn === undefined && checkExpiry) watched.expiredIn = await this.expiredIn(signed, signal);
    const expiredIn = watched.expiredIn;
    if (expiredIn === undefined) return { kind: 'waiting' };
    const final = await this.finalStatus(signed, expiredIn, recent, signal);
    if (final.kind === 'found') return final;
    if (final.kind === 'unavailable') return { kind: 'waiting' };
    // A view older than the one that saw the height pass (a lagging node) may not have the
    // transaction yet: no decision from it.
    if (final.slot < expiredIn.slot) return { kind: 'waiting' };
    const { signature, lastValidBlockHeight } = signed;
    this.options.metrics.transactionResigns.inc({ chain: this.options.rpc.chain, reason: 'expired' });
    this.options.logger.warn(
      { signature, action: job.action, indices: job.indices, lastValidBlockHeight, expiredAtSlot: expiredIn.slot, statusSlot: final.slot },
      'blockhash expired before the transaction landed; this attempt ends and the next one signs anew',
    );
    const expired = `transaction ${signature} not landed: its blockhash expired (block height past ${lastValidBlockHeight})`;
    return { kind: 'expired', reason: `${expired}; ${describeSends(this.options.rpc.chain, sends)}`, sendsAccepted: sends.accepted };
  }

  /**
   * After a failed send the bytes may have reached no node: send again soon, at the next poll
   * after one failure, backing off (doubling) with each failure in a row up to
   * FAILED_SEND_BACKOFF_MAX_REBROADCASTS rebroadcast intervals, and never before the
   * endpoint's Retry-After.
   */
  sendInterval(sends: SendRecord): number {
    const { pollIntervalMs, rebroadcastIntervalMs } = this.options.timing;
    if (sends.failedInARow === 0) return rebroadcastIntervalMs;
    const backoff = Math.min(pollIntervalMs * 2 ** (sends.failedInARow - 1), FAILED_SEND_BACKOFF_MAX_REBROADCASTS * rebroadcastIntervalMs);
    const asked = isBridgeError(sends.lastFailure, 'CHAIN__RPC_FAILED') ? (sends.lastFailure.context.retryAfterMs ?? 0) : 0;
    return Math.max(backoff, asked);
  }

  /** True when an endpoint accepted the bytes. */
  async rebroadcast(signed: SignedTransaction, sends: SendRecord, signal: AbortSignal): Promise<boolean> {
    const { rpc, metrics, logger } = this.options;
    metrics.transactionRebroadcasts.inc({ chain: rpc.chain });
    sends.sending();
    try {
      await rpc.sendTransaction(signed.wire, { skipPreflight: true, preflightCommitment: 'confirmed' }, signal);
      sends.wentThrough();
      return true;
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      sends.failedWith(err);
      logger.debug({ err, signature: signed.signature }, 'rebroadcast failed');
      return false;
    }
  }

  /** A landed transaction's fee (with an error or not, it was charged) and its compute, as the chain charges them. */
  recordLanded({ unitLimit, microLamportsPerUnit, unitsConsumed }: ComputeBudget): void {
    const { rpc, metrics } = this.options;
    const { chain } = rpc;
    metrics.feesPaid.inc({ chain, kind: 'base' }, LAMPORTS_PER_SIGNATURE);
    metrics.feesPaid.inc({ chain, kind: 'priority' }, priorityFeeLamports(microLamportsPerUnit, unitLimit));
    metrics.computeUnits.inc({ chain, kind: 'requested' }, unitLimit);
    metrics.computeUnits.inc({ chain, kind: 'used' }, unitsConsumed);
  }

  /**
   * The status that decides expiry: a history search where some endpoint keeps history; else
   * this round's status-cache read, which knows every transaction of a blockhash still within
   * STATUS_CACHE_BLOCKS_PAST_EXPIRY blocks of its expiry. Past that reach, without history,
   * nothing more can be learned: the absence stands, and the next attempt's fresh read of the
   * trackers decides what is still to do.
   */
  private async finalStatus(signed: SignedTransaction, expiredIn: ChainHeight, recent: Poll, signal: AbortSignal): Promise<Poll> {
    const { rpc } = this.options;
    if (rpc.hasHistory() !== false) {
      const searched = await this.poll(signed.signature, true, signal);
      if (searched.kind !== 'unavailable' || rpc.hasHistory() !== false) return searched;
    }
    if (recent.kind !== 'absent') return recent;
    const blocksPast = expiredIn.blockHeight - signed.lastValidBlockHeight + Math.max(0, recent.slot - expiredIn.slot);
    if (blocksPast > STATUS_CACHE_BLOCKS_PAST_EXPIRY) {
      this.options.logger.warn(
        { signature: signed.signature, blocksPast, lastValidBlockHeight: signed.lastValidBlockHeight },
        "transaction checked past the status cache's reach without history on this chain: taken as not landed; the next attempt re-reads the trackers before planning",
      );
    }
    return recent;
  }

  /** The view (slot and height of one answer) in which the block height has passed lastValidBlockHeight; undefined while it has not. */
  private async expiredIn(signed: SignedTransaction, signal: AbortSignal): Promise<ChainHeight | undefined> {
    try {
      const view = await this.options.rpc.getChainHeight('confirmed', signal);
      return view.blockHeight > signed.lastValidBlockHeight ? view : undefined;
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      this.options.logger.debug({ err }, 'block height check failed');
      return undefined;
    }
  }
}

/**
 * Why a transaction never landed, as far as this server can tell: every send failed (the
 * last failure names the status and endpoint), or the node accepted it and it was dropped.
 */
function describeSends(chain: ChainSide, sends: SendRecord): string {
  return (
    everySendFailed(chain, sends) ??
    `the ${chainName(chain)} chain's RPC accepted it ${sends.accepted} of ${timesOf(sends)} but it never landed (dropped before a leader included it)`
  );
}

/** When every send failed (HTTP, JSON-RPC or transport): how many, and the last failure; undefined when some node accepted one. */
export function everySendFailed(chain: ChainSide, sends: SendRecord): string | undefined {
  if (sends.sent === 0 || sends.failed !== sends.sent) return undefined;
  return `sendTransaction on the ${chainName(chain)} chain failed every time (${timesOf(sends)}; last: ${sendFailureSummary(sends.lastFailure)})`;
}

function timesOf(sends: SendRecord): string {
  return `${sends.sent} send${sends.sent === 1 ? '' : 's'}`;
}

// An RPC failure's text is already bounded where it was made (rpcFailure); anything else is not.
function sendFailureSummary(err: unknown): string {
  return isBridgeError(err, 'CHAIN__RPC_FAILED') ? shortRpcFailure(err) : boundText(describeError(err));
}
