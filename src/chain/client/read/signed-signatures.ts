/**
 * Signatures this process signed, per chain: the most recent MAX_SIGNED_KEPT. A transaction
 * can land only while its blockhash is valid (150 blocks, about a minute) and the next read
 * sees it, so only the last few cycles' signatures matter; a cycle signs at most a few dozen.
 */
export const MAX_SIGNED_KEPT = 10_000;

/**
 * What this process signed on one chain: each send adds its signatures as it signs them
 * (../submit/), and the authority's history (./authority-history.ts) asks it, since a landed
 * transaction of the key that is not here was signed by something else.
 */
export class SignedSignatures {
  readonly #signatures = new Set<string>();

  add(signature: string): void {
    this.#signatures.add(signature);
    if (this.#signatures.size > MAX_SIGNED_KEPT) this.#signatures.delete(this.#signatures.values().next().value as string);
  }

  has(signature: string): boolean {
    return this.#signatures.has(signature);
  }
}
