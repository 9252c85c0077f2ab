import type { TransactionError } from './transaction-error.js';

/**
 * Recent blockhashes and signature statuses. A blockhash made at block height `h` is valid
 * while the height is at most `h + 150`. Statuses are kept for the most recent
 * `maxStatuses` transactions (oldest dropped first) so a long-running devnet stays bounded.
 */

export const BLOCKHASH_VALIDITY_BLOCKS = 150;

export class RecentBlockhashes {
  // Insertion order is block order, so expired hashes are always at the front.
  readonly #lastValid = new Map<string, number>();

  add(blockhash: string, blockHeight: number): void {
    this.#lastValid.set(blockhash, blockHeight + BLOCKHASH_VALIDITY_BLOCKS);
  }

  lastValidBlockHeight(blockhash: string): number | undefined {
    return this.#lastValid.get(blockhash);
  }

  /** Valid at `blockHeight`, and made at or before `madeBy` (a node that has seen the blocks up to it). */
  isValid(blockhash: string, blockHeight: number, madeBy = blockHeight): boolean {
    const lastValid = this.#lastValid.get(blockhash);
    return lastValid !== undefined && blockHeight <= lastValid && lastValid - BLOCKHASH_VALIDITY_BLOCKS <= madeBy;
  }

  /** The valid blockhashes, newest first. */
  newestFirst(): string[] {
    return [...this.#lastValid.keys()].reverse();
  }

  prune(blockHeight: number): void {
    for (const [blockhash, lastValid] of this.#lastValid) {
      if (lastValid >= blockHeight) return;
      this.#lastValid.delete(blockhash);
    }
  }
}

export interface SignatureStatus {
  slot: number;
  err: TransactionError | null;
}

/** The most recent `maxEntries` values by signature, oldest dropped first. */
export class RecentBySignature<T> {
  readonly #entries = new Map<string, T>();
  readonly #maxEntries: number;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  get(signature: string): T | undefined {
    return this.#entries.get(signature);
  }

  has(signature: string): boolean {
    return this.#entries.has(signature);
  }

  values(): IterableIterator<T> {
    return this.#entries.values();
  }

  record(signature: string, value: T): void {
    this.#entries.set(signature, value);
    if (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value as string);
  }
}

export class SignatureStatuses extends RecentBySignature<SignatureStatus> {}

/** A landed transaction as getTransaction answers it. */
export interface LandedTransaction {
  slot: number;
  blockTime: number;
  err: TransactionError | null;
  feePayer: string;
  /** Lamports charged: 5,000 per signature plus `priorityFee`. */
  fee: bigint;
  priorityFee: bigint;
  computeUnitLimit: number;
  /** Micro-lamports per compute unit. */
  computeUnitPrice: bigint;
  computeUnitsConsumed: number;
  logMessages: string[];
  /** The transaction as it was sent (signatures and message). */
  wire: Uint8Array;
  version: 'legacy' | 0;
}

/** One landed transaction as getSignaturesForAddress reports it. */
export interface AddressSignature {
  signature: string;
  slot: number;
  err: TransactionError | null;
  /** Unix seconds at landing. */
  blockTime: number;
}

export interface AddressSignatureQuery {
  /** Only transactions that landed before this slot (exclusive). */
  beforeSlot?: number;
  /** Only transactions that landed after this slot (exclusive). */
  untilSlot?: number;
  limit: number;
}

/**
 * Per address, the landed transactions that list it, in landing order. Every landed
 * transaction has a block of its own, so slots are strictly increasing within a list and a
 * signature bound (before, until) is exactly a slot bound. Bounded like SignatureStatuses:
 * only the most recent `maxTransactions` are kept; the oldest is dropped from the front of each
 * of its addresses' lists (the front, since the lists are in landing order too).
 */
export class AddressSignatures {
  readonly #byAddress = new Map<string, AddressSignature[]>();
  readonly #landed: Array<{ record: AddressSignature; addresses: string[] }> = [];
  readonly #maxTransactions: number;

  constructor(maxTransactions: number) {
    this.#maxTransactions = maxTransactions;
  }

  record(record: AddressSignature, addresses: readonly string[]): void {
    const unique = [...new Set(addresses)];
    for (const address of unique) {
      const list = this.#byAddress.get(address);
      if (list === undefined) this.#byAddress.set(address, [record]);
      else list.push(record);
    }
    this.#landed.push({ record, addresses: unique });
    if (this.#landed.length > this.#maxTransactions) this.#dropOldest();
  }

  /** Newest first, at most `limit`. */
  query(address: string, { beforeSlot, untilSlot, limit }: AddressSignatureQuery): AddressSignature[] {
    const list = this.#byAddress.get(address) ?? [];
    const found: AddressSignature[] = [];
    for (let i = endBefore(list, beforeSlot) - 1; i >= 0 && found.length < limit; i -= 1) {
      const record = list[i]!;
      if (untilSlot !== undefined && record.slot <= untilSlot) break;
      found.push(record);
    }
    return found;
  }

  #dropOldest(): void {
    const { addresses } = this.#landed.shift()!;
    for (const address of addresses) {
      const list = this.#byAddress.get(address)!;
      list.shift();
      if (list.length === 0) this.#byAddress.delete(address);
    }
  }
}

/** The index just past the last record with a slot below `beforeSlot` (binary search). */
function endBefore(list: readonly AddressSignature[], beforeSlot: number | undefined): number {
  if (beforeSlot === undefined) return list.length;
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (list[mid]!.slot < beforeSlot) low = mid + 1;
    else high = mid;
  }
  return low;
}
