import { ComputeBudgetProgram, type TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { Logger } from '../../../log/logger.js';
import { isBridgeError } from '../../../errors.js';
import { isDefiniteSendRefusal } from '../../../failure-policy.js';
import type { Metrics } from '../../../metrics/metrics.js';
import type { AuthoritySigner } from '../../../signer/authority-signer.js';
import { sleep } from '../../../time.js';
import type { ChainRpc } from '../../rpc/chain-rpc.js';
import { preflightFailure, shortRpcFailure } from '../../rpc/rpc-failure.js';
import type { PriorityFeeBidder } from '../budget/priority-fee.js';
import type { SignedSignatures } from '../read/signed-signatures.js';
import { signTransaction } from './build/sign-transaction.js';
import type { Broadcast } from './send/broadcast.js';
import { everySendFailed, NO_EXPIRY, SendRecord, SignatureWatch } from './watch/signature-watch.js';
import type { SignedTransaction } from './build/sign-transaction.js';
import type { SubmitTiming } from './transaction-sender.js';

/**
 * One small transaction of the authority's that is not a crank action (the signing lease's take,
 * take-over and release: ./lease.ts), landed on the terms every transaction of the server lands
 * on (docs/chain-client.md, "Small transactions"): its price bid from the market by the chain's
 * bidder (../budget/priority-fee.ts) under a compute limit the caller measured, signed against
 * a confirmed blockhash or a durable value the caller holds, sent once with preflight, then
 * re-sent through the read endpoints and every send-only path (./send/broadcast.ts) at the
 * sender's pace while it can land, and landed only once a status says confirmed (a status seen
 * only at processed may be on a fork that is abandoned). It can no longer land once the block
 * height passed its lastValidBlockHeight and a status read from a view at or past that height
 * finds nothing; a durable value has no such end, and the wait ends at `confirmTimeoutMs` with
 * the outcome unknown (the caller reads its account again). Each ending is bounded by
 * `confirmTimeoutMs`.
 */

export interface SmallTransactionContext {
  rpc: ChainRpc;
  signer: AuthoritySigner;
  bidder: PriorityFeeBidder;
  /** The chain's read endpoints and send-only paths, and the record of what landed. */
  broadcast: Broadcast;
  /** Every signature made here is added (second-signer detection). */
  signed: SignedSignatures;
  timing: SubmitTiming;
  metrics: Metrics;
  logger: Logger;
}

export interface SmallTransactionRequest {
  instructions: readonly TransactionInstruction[];
  /** SetComputeUnitLimit: what the instructions were measured to use, with a margin. */
  unitLimit: number;
  /** A durable value to sign against (a nonce-like account's; `instructions` then start with its AdvanceNonceAccount); the latest confirmed blockhash otherwise. */
  durableValue?: string;
}

export type SmallTransactionOutcome =
  | { kind: 'landed'; signature: string; slot: number }
  | { kind: 'landed_with_error'; signature: string; slot: number; err: unknown }
  | { kind: 'refused' | 'not_landed' | 'unknown'; signature: string; reason: string };

export async function submitSmallTransaction(
  ctx: SmallTransactionContext,
  request: SmallTransactionRequest,
  signal: AbortSignal,
): Promise<SmallTransactionOutcome> {
  const { rpc, signer, bidder, broadcast, timing } = ctx;
  const bid = await bidder.bid(request.instructions, signal);
  const { blockhash, lastValidBlockHeight } =
    request.durableValue === undefined
      ? await rpc.getLatestBlockhash('confirmed', signal)
      : { blockhash: request.durableValue, lastValidBlockHeight: NO_EXPIRY };
  const budget = [
    ComputeBudgetProgram.setComputeUnitLimit({ units: request.unitLimit }),
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports: bid.microLamportsPerUnit }),
  ];
  // A durable-nonce transaction's AdvanceNonceAccount must be its first instruction (the runtime
  // recognises one only there): the budget then follows the caller's instructions.
  const ordered = request.durableValue === undefined ? [...budget, ...request.instructions] : [...request.instructions, ...budget];
  const wire = await signTransaction(signer, ordered, blockhash, lastValidBlockHeight);
  const signature = bs58.encode(wire.signature);
  ctx.signed.add(signature);
  const signed: SignedTransaction = {
    wire: wire.wire,
    signature,
    lastValidBlockHeight,
    budget: { unitLimit: request.unitLimit, microLamportsPerUnit: bid.microLamportsPerUnit, loadedAccountsBytes: 0, unitsConsumed: 0 },
    leading: request.durableValue === undefined ? budget.length : 0,
  };
  const watch = new SignatureWatch({ rpc, metrics: ctx.metrics, logger: ctx.logger, timing });
  const carried = broadcast.carried(signed, signal);
  const sends = new SendRecord();
  sends.sending();
  try {
    await rpc.sendTransaction(signed.wire, { skipPreflight: false, preflightCommitment: 'confirmed' }, signal);
    sends.wentThrough();
    broadcast.readEndpointsAnswered(carried, signed, true);
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    const preflight = preflightFailure(err);
    if (preflight !== undefined) return { kind: 'refused', signature, reason: `refused in preflight: ${JSON.stringify(preflight.transactionError)}` };
    if (isDefiniteSendRefusal(err) && isBridgeError(err, 'CHAIN__RPC_FAILED'))
      return { kind: 'refused', signature, reason: `the node refused it: ${shortRpcFailure(err)}` };
    sends.failedWith(err);
    broadcast.readEndpointsAnswered(carried, signed, false);
  }
  broadcast.sendOnPaths(carried, signed, signal);

  const started = Date.now();
  let lastSend = started;
  let lastExpiryCheck = started;
  while (Date.now() - started < timing.confirmTimeoutMs) {
    const poll = await watch.poll(signature, false, signal);
    if (poll.kind === 'found' && (poll.status.confirmationStatus === 'confirmed' || poll.status.confirmationStatus === 'finalized')) {
      broadcast.landed(carried, [signed], 0, poll.status.slot);
      bidder.landed();
      const slot = Math.max(poll.slot, poll.status.slot);
      return poll.status.err === null ? { kind: 'landed', signature, slot } : { kind: 'landed_with_error', signature, slot, err: poll.status.err };
    }
    // The height is checked once per rebroadcast interval, as the sender checks it.
    const checkExpiry = poll.kind === 'absent' && lastValidBlockHeight !== NO_EXPIRY && Date.now() - lastExpiryCheck >= timing.rebroadcastIntervalMs;
    if (checkExpiry) lastExpiryCheck = Date.now();
    if (checkExpiry && (await expiredBy(rpc, lastValidBlockHeight, poll.slot, signal))) {
      broadcast.notLanded(carried, [signed]);
      if (sends.accepted > 0) bidder.expired();
      const reason = everySendFailed(rpc.chain, sends) ?? `its blockhash expired (block height past ${lastValidBlockHeight}) before it landed`;
      return { kind: 'not_landed', signature, reason };
    }
    if (Date.now() - lastSend >= watch.sendInterval(sends)) {
      lastSend = Date.now();
      const accepted = await watch.rebroadcast(signed, sends, signal);
      broadcast.readEndpointsAnswered(carried, signed, accepted);
      broadcast.sendOnPaths(carried, signed, signal);
    }
    await sleep(timing.pollIntervalMs, signal);
  }
  const failedSends = everySendFailed(rpc.chain, sends);
  return {
    kind: 'unknown',
    signature,
    reason: `not confirmed within ${Math.ceil(timing.confirmTimeoutMs / 1000)} s${failedSends === undefined ? '' : `: ${failedSends}`}; it may still land`,
  };
}

/** Whether a view at or before `statusSlot` (the absent status's) shows the block height past `lastValidBlockHeight`. */
async function expiredBy(rpc: ChainRpc, lastValidBlockHeight: number, statusSlot: number, signal: AbortSignal): Promise<boolean> {
  try {
    const view = await rpc.getChainHeight('confirmed', signal);
    return view.blockHeight > lastValidBlockHeight && statusSlot >= view.slot;
  } catch {
    if (signal.aborted) throw signal.reason;
    return false;
  }
}
