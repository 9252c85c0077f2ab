/**
 * Solana's base fee: lamports per signature of a transaction. The bridge's transactions have
 * one signature (the authority's) and pay no priority fee. A leaf module: configuration reads
 * it without loading the Solana stack.
 */
export const LAMPORTS_PER_SIGNATURE = 5_000;
