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

  isValid(blockhash: string, blockHeight: number): boolean {
    const lastValid = this.#lastValid.get(blockhash);
    return lastValid !== undefined && blockHeight <= lastValid;
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

export class SignatureStatuses {
  readonly #statuses = new Map<string, SignatureStatus>();
  readonly #maxStatuses: number;

  constructor(maxStatuses: number) {
    this.#maxStatuses = maxStatuses;
  }

  get(signature: string): SignatureStatus | undefined {
    return this.#statuses.get(signature);
  }

  has(signature: string): boolean {
    return this.#statuses.has(signature);
  }

  record(signature: string, status: SignatureStatus): void {
    this.#statuses.set(signature, status);
    if (this.#statuses.size > this.#maxStatuses) this.#statuses.delete(this.#statuses.keys().next().value as string);
  }
}
