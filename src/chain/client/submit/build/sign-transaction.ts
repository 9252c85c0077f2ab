import { Transaction, type PublicKey, type TransactionError, type TransactionInstruction } from '@solana/web3.js';
import type { CrankAction } from '../../../../domain.js';
import type { AuthoritySigner } from '../../../../signer/authority-signer.js';
import { verifiedSignature } from '../../../../signer/verified-signature.js';
import type { ChainRpc } from '../../../rpc/chain-rpc.js';
import { leadingBatchSize } from './batch.js';
import { BUDGET_INSTRUCTION_COUNT, BUDGET_SIZE_PREFIX, measureBatch, type ComputeBudget, type ComputeCeilings } from '../../budget/compute-budget.js';
import type { LoadedAccounts } from '../../budget/loaded-accounts.js';
import type { Bid, PriorityFeeBidder } from '../../budget/priority-fee.js';

/** A transaction signed and ready to send: its bytes, the lifetime it was signed against and the budget it carries. */
export interface SignedTransaction {
  wire: Uint8Array;
  signature: string;
  /** NO_EXPIRY for a durable-nonce transaction: it stays valid until its nonce moves. */
  lastValidBlockHeight: number;
  /** The compute budget its leading instructions set. */
  budget: ComputeBudget;
  /** Instructions before the first of the action's (AdvanceNonceAccount, the budget's): an error's position counts them. */
  leading: number;
  /** The nonce value it was signed against, in nonce mode. */
  nonce?: NonceBinding;
}

/** A transaction signed against the value `nonce` of the nonce account `lane`, read at `slot`. */
export interface NonceBinding {
  lane: PublicKey;
  nonce: string;
  slot: number;
}

/**
 * A transaction signed by the authority: the next one of a batch, sized by bytes and by
 * compute and priced; and the legacy wire form signed through the AuthoritySigner.
 */

export interface SignedWire {
  wire: Uint8Array;
  signature: Uint8Array;
}

/**
 * A legacy transaction of `instructions`, paid and signed by the authority alone. The signature
 * is checked against the public key before the bytes leave (verifiedSignature), as web3.js's
 * serialize() would: a signer that signs with another key than the one it showed at start fails
 * here with SIGNER__UNAVAILABLE `key_mismatch`, not on chain.
 */
export async function signTransaction(
  signer: AuthoritySigner,
  instructions: readonly TransactionInstruction[],
  blockhash: string,
  lastValidBlockHeight: number,
): Promise<SignedWire> {
  const feePayer = signer.publicKey;
  const transaction = new Transaction({ feePayer, blockhash, lastValidBlockHeight }).add(...instructions);
  const message = transaction.serializeMessage();
  const signature = await verifiedSignature(signer, message);
  transaction.addSignature(feePayer, Buffer.from(signature));
  return { wire: transaction.serialize({ verifySignatures: false }), signature };
}

/**
 * How one batch lands, decided once from the nonce pool's mode: what leads its instructions
 * besides the budget (AdvanceNonceAccount of `lane` in nonce mode, nothing in blockhash mode).
 * The simulation runs it and the signature covers it: the message measured is the one signed.
 */
export interface LifetimeLead {
  leading: TransactionInstruction[];
  /** The nonce account the batch advances; absent in blockhash mode. */
  lane?: PublicKey;
}

/** What signs a transaction's instructions behind its compute budget (the chain's TransactionSender). */
interface Signs {
  leadFor(action: CrankAction): LifetimeLead;
  sign(instructions: readonly TransactionInstruction[], budget: ComputeBudget, lead: LifetimeLead, signal: AbortSignal): Promise<SignedTransaction>;
}

export interface SignedBatch<T> {
  /** The leading items this transaction carries. */
  items: T[];
  signed: SignedTransaction;
  bid: Bid;
  /** How it was signed: a re-sign lands the same way. */
  lead: LifetimeLead;
}

/** The leading items whose simulation failed: nothing was signed. */
export interface RefusedBatch<T> {
  items: T[];
  refusal: TransactionError;
  /** Instructions before the items' in the simulated message. */
  leading: number;
}

/**
 * The next transaction of a batch: as many of the leading `queue` items as fit one
 * transaction's bytes and compute (at most `maxCount`, at most the ceiling's units per
 * instruction), priced by the chain's bidder and signed; or the simulation's refusal.
 */
export async function signNextBatch<T extends { instruction: TransactionInstruction }>(
  s: {
    rpc: ChainRpc;
    authority: PublicKey;
    bidder: PriorityFeeBidder;
    sender: Signs;
    ceilings: ComputeCeilings;
    loaded: LoadedAccounts;
    target: { action: CrankAction };
  },
  queue: readonly T[],
  maxCount: number,
  signal: AbortSignal,
): Promise<SignedBatch<T> | RefusedBatch<T>> {
  const { action } = s.target;
  const lead = s.sender.leadFor(action);
  const { leading } = lead;
  const instructions = queue.map((item) => item.instruction);
  const bySize = instructions.slice(0, leadingBatchSize(instructions, s.authority, undefined, [...leading, ...BUDGET_SIZE_PREFIX]));
  const bid = await s.bidder.bid(bySize, signal);
  const measured = await measureBatch(
    {
      rpc: s.rpc,
      feePayer: s.authority,
      leading,
      instructions: bySize,
      microLamportsPerUnit: bid.microLamportsPerUnit,
      maxCount,
      ceilings: s.ceilings,
      action,
      loaded: s.loaded,
    },
    signal,
  );
  const items = queue.slice(0, measured.count);
  if ('refusal' in measured) return { items, refusal: measured.refusal, leading: leading.length + BUDGET_INSTRUCTION_COUNT };
  const signed = await s.sender.sign(bySize.slice(0, measured.count), measured.budget, lead, signal);
  return { items, signed, bid, lead };
}
