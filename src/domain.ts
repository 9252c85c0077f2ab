/**
 * The bridge's own words, shared by every part of the server (and the devnet, the tests and the
 * benches): which chain, which crank action. Each is spelled as PROTOCOL.md and the metric
 * labels spell it; messages say "destination" for `target` (chain/chain-name.ts).
 */

/** The chain a tracker, an RPC endpoint or a transaction belongs to. */
export type ChainSide = 'source' | 'target';

/** The three things the crank submits, by their instruction names. */
export type CrankAction = 'ack_deposit' | 'ack_withdraw' | 'cleanup_deposit';

/** Both chains, in the order logs, metrics and /health list them. */
export const CHAINS: readonly ChainSide[] = ['source', 'target'];
