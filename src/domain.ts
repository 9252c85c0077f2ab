/**
 * The bridge's own words, shared by every part of the server (and the devnet, the tests and the
 * benches): which chain, which crank action. Each is spelled as PROTOCOL.md and the metric
 * labels spell it; messages say "destination" for `target` (chainName, below).
 */

/** The chain a tracker, an RPC endpoint or a transaction belongs to. */
export type ChainSide = 'source' | 'target';

/** The three things the crank submits, by their instruction names. */
export type CrankAction = 'ack_deposit' | 'ack_withdraw' | 'cleanup_deposit';

/** Both chains, in the order logs, metrics and /health list them. */
export const CHAINS: readonly ChainSide[] = ['source', 'target'];

/** How messages name a chain: "source" or "destination" (metric labels say "target"). */
export function chainName(chain: ChainSide): 'source' | 'destination' {
  return chain === 'source' ? 'source' : 'destination';
}

/** The variables that configure a chain, for messages that name them (src/config reads them). */
export function chainVariables(chain: ChainSide): { rpcUrl: string; fallbackUrls: string; programId: string } {
  const prefix = `BRIDGE_${chain.toUpperCase()}`;
  return { rpcUrl: `${prefix}_RPC_URL`, fallbackUrls: `${prefix}_RPC_FALLBACK_URLS`, programId: `${prefix}_PROGRAM_ID` };
}
