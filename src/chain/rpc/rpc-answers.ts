import * as z from 'zod';
import { PublicKey, VersionedTransaction, type SignatureStatus, type TransactionError } from '@solana/web3.js';
import type { ChainSide } from '../../domain.js';
import { MAX_ACCOUNT_SLICE_BYTES, MAX_MULTIPLE_ACCOUNTS } from './bounded-body.js';
import { rpcFailure } from './rpc-failure.js';

/**
 * What a node answers to the methods the chain client uses (./chain-rpc.ts), and the checks
 * that it answered so: a result of the wrong shape is CHAIN__RPC_FAILED (`invalid_result` or
 * `malformed`, naming the method and what was wrong), never a value taken on its word.
 */

/**
 * An account as a node answered: null when it does not exist. `space` is the whole account's
 * data length, which nodes report next to a dataSlice (absent from nodes too old to send it).
 */
export type AccountData = { owner: PublicKey; lamports: number; data: Uint8Array; space?: number } | null;

export interface AccountSnapshot {
  /** The slot at which the node answered. */
  slot: number;
  account: AccountData;
}

/** Several accounts from one answer: one view of the chain, at `slot`. */
export interface AccountsSnapshot {
  slot: number;
  /** In the order of the addresses asked for. */
  accounts: AccountData[];
}

/** One entry of getSignaturesForAddress. */
export interface AddressSignature {
  signature: string;
  slot: number;
  /** null when the transaction succeeded. */
  err: TransactionError | null;
  /** Unix seconds; null when the node does not know. */
  blockTime: number | null;
}

/** A transaction's signed message and its required signers, in order (the first is the fee payer, whose signature is the transaction's id). */
export interface TransactionSignatures {
  message: Uint8Array;
  signers: Array<{ key: string; signature: Uint8Array }>;
}

/** One signature's status and the slot of the view that answered. */
export interface SignatureStatusAt {
  /** The context slot of the answer: the status is what the node knew at this slot. */
  slot: number;
  /** null when the node knows nothing of it. */
  status: SignatureStatus | null;
}

/** The slot and the block height of one view of the chain, from one answer. */
export interface ChainHeight {
  slot: number;
  blockHeight: number;
}

/** What simulateTransaction reports of a message: its error (null when it would succeed) and the compute it used. */
export interface Simulation {
  err: TransactionError | null;
  unitsConsumed: number;
  /** The label of the endpoint that answered: one node's word. */
  endpoint: string;
}

/** One slot of getRecentPrioritizationFees: the lowest price (micro-lamports per CU) that landed in it. */
export interface SlotPrioritizationFee {
  slot: number;
  prioritizationFee: number;
}

const landedMetaSchema = z.object({
  meta: z.object({ computeUnitsConsumed: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional() }).nullable(),
});

/** `meta.computeUnitsConsumed` of a getTransaction result; null for no transaction, no meta or no count (older nodes). */
export function computeUnitsOf(chain: ChainSide, result: unknown): number | null {
  if (result === null) return null;
  const parsed = landedMetaSchema.safeParse(result);
  if (!parsed.success)
    throw rpcFailure(chain, 'getTransaction', {
      kind: 'invalid_result',
      reason: `meta.computeUnitsConsumed: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
    });
  return parsed.data.meta?.computeUnitsConsumed ?? null;
}

/** The message and the required signers (the first numRequiredSignatures keys, with their signatures) of a base64 getTransaction result. */
export function signaturesOf(chain: ChainSide, result: unknown): TransactionSignatures {
  const encoded = (result as { transaction?: unknown } | undefined)?.transaction;
  if (!Array.isArray(encoded) || typeof encoded[0] !== 'string') {
    throw rpcFailure(chain, 'getTransaction', { kind: 'invalid_result', reason: 'the result has no base64 `transaction`' });
  }
  let transaction: VersionedTransaction;
  try {
    transaction = VersionedTransaction.deserialize(Buffer.from(encoded[0], 'base64'));
  } catch (err) {
    throw rpcFailure(chain, 'getTransaction', { kind: 'invalid_result', reason: `the transaction does not deserialize: ${String(err)}` });
  }
  const { message, signatures } = transaction;
  const keys = message.staticAccountKeys.slice(0, message.header.numRequiredSignatures);
  return { message: message.serialize(), signers: keys.map((key, i) => ({ key: key.toBase58(), signature: signatures[i] ?? new Uint8Array() })) };
}

export function simulationOf(chain: ChainSide, result: unknown): Omit<Simulation, 'endpoint'> & { slot: number } {
  const answer = result as { context?: { slot?: unknown }; value?: { err?: unknown; unitsConsumed?: unknown } } | null | undefined;
  const value = answer?.value;
  const units = value?.unitsConsumed;
  const slot = answer?.context?.slot;
  if (value === undefined || value.err === undefined || !isCount(units) || !isCount(slot)) {
    throw rpcFailure(chain, 'simulateTransaction', {
      kind: 'invalid_result',
      reason: 'the result has no context slot, or no `value` with `err` and a `unitsConsumed` count',
    });
  }
  return { err: value.err as TransactionError | null, unitsConsumed: units, slot };
}

export function prioritizationFeesOf(chain: ChainSide, result: unknown): SlotPrioritizationFee[] {
  const valid =
    Array.isArray(result) &&
    result.every((entry: { slot?: unknown; prioritizationFee?: unknown } | null) => isCount(entry?.slot) && isCount(entry?.prioritizationFee));
  if (!valid) {
    throw rpcFailure(chain, 'getRecentPrioritizationFees', {
      kind: 'invalid_result',
      reason: 'expected an array of {slot, prioritizationFee} counts',
    });
  }
  return (result as SlotPrioritizationFee[]).map(({ slot, prioritizationFee }) => ({ slot, prioritizationFee }));
}

// A caller's mistake, caught before any request: a node would refuse the first, and the second
// would let an answer outgrow the response bound.
export function checkMultipleAccountsRequest(addresses: number, sliceLength: number): void {
  if (addresses > MAX_MULTIPLE_ACCOUNTS)
    throw new RangeError(`getMultipleAccounts takes at most ${MAX_MULTIPLE_ACCOUNTS} addresses, not ${addresses}`);
  if (addresses * sliceLength > MAX_ACCOUNT_SLICE_BYTES) {
    throw new RangeError(`getMultipleAccounts asks at most ${MAX_ACCOUNT_SLICE_BYTES} bytes in all, not ${addresses} x ${sliceLength}`);
  }
}

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

const accountsAnswer = z.object({
  context: z.object({ slot: count }),
  value: z.array(
    z
      .object({
        data: z.tuple([z.base64(), z.literal('base64')]),
        lamports: count,
        owner: z.string().refine(isAddress, 'not a base58 address'),
        space: count.optional(),
      })
      .nullable(),
  ),
});

/**
 * A getMultipleAccounts answer, checked: one account (or null) per address asked, in order,
 * none with more data than the slice asked for, every count a safe integer.
 */
export function accountsOf(chain: ChainSide, result: unknown, addresses: number, sliceLength: number): AccountsSnapshot {
  const parsed = accountsAnswer.safeParse(result);
  const invalid = (reason: string) =>
    rpcFailure(chain, 'getMultipleAccounts', { kind: 'malformed', reason: `response of an unexpected shape: ${reason}` });
  if (!parsed.success) throw invalid(z.prettifyError(parsed.error));
  const { context, value } = parsed.data;
  if (value.length !== addresses) throw invalid(`${value.length} accounts for ${addresses} addresses`);
  const accounts = value.map((account) => {
    if (account === null) return null;
    const data = new Uint8Array(Buffer.from(account.data[0], 'base64'));
    if (data.length > sliceLength) throw invalid(`an account of ${data.length} bytes for a slice of ${sliceLength}`);
    return {
      owner: new PublicKey(account.owner),
      lamports: account.lamports,
      data,
      ...(account.space === undefined ? {} : { space: account.space }),
    };
  });
  return { slot: context.slot, accounts };
}

function isAddress(text: string): boolean {
  try {
    return new PublicKey(text).toBase58() === text;
  } catch {
    return false;
  }
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

// web3.js v1 keeps the node's `space` field on the parsed value but does not declare it.
export function spaceOf(value: object): { space?: number } {
  const space: unknown = (value as { space?: unknown }).space;
  return typeof space === 'number' && Number.isSafeInteger(space) && space >= 0 ? { space } : {};
}
