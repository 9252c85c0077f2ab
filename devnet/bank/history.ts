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

  /** The valid blockhashes made at or before `madeBy` (all by default), newest first. */
  newestFirst(madeBy = Infinity): string[] {
    return [...this.#lastValid]
      .filter(([, lastValid]) => lastValid - BLOCKHASH_VALIDITY_BLOCKS <= madeBy)
      .map(([blockhash]) => blockhash)
      .reverse();
  }

  /**
   * The newest blockhash made at or before `height` (by height, not by count: a fork abandoned
   * leaves heights without one), else the oldest kept; with its last valid block height.
   */
  newestMadeBy(height: number): { blockhash: string; lastValidBlockHeight: number } {
    let found: [string, number] | undefined;
    for (const entry of this.#lastValid) {
      if (found !== undefined && entry[1] - BLOCKHASH_VALIDITY_BLOCKS > height) break;
      found = entry;
    }
    return { blockhash: found![0], lastValidBlockHeight: found![1] };
  }

  /** Forgets the blockhashes made at heights `from` to `to` (a fork's blocks, abandoned). */
  forgetMade(from: number, to: number): void {
    for (const [blockhash, lastValid] of this.#lastValid) {
      const made = lastValid - BLOCKHASH_VALIDITY_BLOCKS;
      if (made >= from && made <= to) this.#lastValid.delete(blockhash);
    }
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
  /** Landing order on the chain: several transactions share a slot, in the order they arrived. */
  seq: number;
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

  /** Forgets what `abandoned` says (the transactions of a fork's slots). */
  forget(abandoned: (value: T) => boolean): void {
    for (const [signature, value] of this.#entries) if (abandoned(value)) this.#entries.delete(signature);
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
  /** Landing order (SignatureStatus.seq). */
  seq: number;
  err: TransactionError | null;
  /** Unix seconds at landing. */
  blockTime: number;
}

/** Where a transaction is in the chain's landing order: its slot, then its place among the slot's. */
export interface LandingPosition {
  slot: number;
  seq: number;
}

export interface AddressSignatureQuery {
  /** Only transactions that landed before this position (exclusive). */
  before?: LandingPosition;
  /** Only transactions that landed after this position (exclusive). */
  until?: LandingPosition;
  limit: number;
}

/** a lands before b. */
export function landedBefore(a: LandingPosition, b: LandingPosition): boolean {
  return a.slot < b.slot || (a.slot === b.slot && a.seq < b.seq);
}

/**
 * Per address, the landed transactions that list it, in landing order. A signature bound
 * (before, until) is a landing position: several transactions share a slot, and Agave's
 * blockstore orders those of one block as the block does. Bounded like SignatureStatuses:
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
  query(address: string, { before, until, limit }: AddressSignatureQuery): AddressSignature[] {
    const list = this.#byAddress.get(address) ?? [];
    const found: AddressSignature[] = [];
    for (let i = endBefore(list, before) - 1; i >= 0 && found.length < limit; i -= 1) {
      const record = list[i]!;
      if (until !== undefined && !landedBefore(until, record)) break;
      found.push(record);
    }
    return found;
  }

  /** Forgets the transactions that landed in `fromSlot` or later (a fork abandoned): the newest, at the end of every list. */
  forgetFrom(fromSlot: number): void {
    while (this.#landed.length > 0 && this.#landed.at(-1)!.record.slot >= fromSlot) {
      const { addresses } = this.#landed.pop()!;
      for (const address of addresses) {
        const list = this.#byAddress.get(address)!;
        list.pop();
        if (list.length === 0) this.#byAddress.delete(address);
      }
    }
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

/** The index just past the last record that landed before `before` (binary search). */
function endBefore(list: readonly AddressSignature[], before: LandingPosition | undefined): number {
  if (before === undefined) return list.length;
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (landedBefore(list[mid]!, before)) low = mid + 1;
    else high = mid;
  }
  return low;
}
