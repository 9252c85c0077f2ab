import type { ChainSide } from '../domain.js';

/** How messages name a chain: "source" or "destination" (metric labels say "target"). */
export function chainName(chain: ChainSide): 'source' | 'destination' {
  return chain === 'source' ? 'source' : 'destination';
}
