import type { ChainSide } from '../domain.js';

/** How messages name a chain: "source" or "destination" (metric labels say "target"). */
export function chainName(chain: ChainSide): 'source' | 'destination' {
  return chain === 'source' ? 'source' : 'destination';
}

/** The variables that configure a chain, for messages that name them (src/config reads them). */
export function chainVariables(chain: ChainSide): { rpcUrl: string; fallbackUrls: string; programId: string } {
  const prefix = `BRIDGE_${chain.toUpperCase()}`;
  return { rpcUrl: `${prefix}_RPC_URL`, fallbackUrls: `${prefix}_RPC_FALLBACK_URLS`, programId: `${prefix}_PROGRAM_ID` };
}
