/**
 * Solana's fee rates (PROTOCOL.md "Compute units and fees"): a transaction pays
 * LAMPORTS_PER_SIGNATURE per signature (the bridge's transactions have one, the authority's) plus
 * its priority fee. A leaf module: configuration reads it without loading the Solana stack.
 */
export const LAMPORTS_PER_SIGNATURE = 5_000;

/** What the runtime reserves per instruction of a non-builtin program without SetComputeUnitLimit. */
export const DEFAULT_UNITS_PER_INSTRUCTION = 200_000;

const MICRO_LAMPORTS_PER_LAMPORT = 1_000_000n;

/** Lamports of priority fee: ceil(price x limit / 1,000,000), paid on the limit, not on the use. */
export function priorityFeeLamports(microLamportsPerUnit: number, unitLimit: number): number {
  const product = BigInt(microLamportsPerUnit) * BigInt(unitLimit);
  return Number((product + MICRO_LAMPORTS_PER_LAMPORT - 1n) / MICRO_LAMPORTS_PER_LAMPORT);
}
