import type { BridgeView } from '../../chain/bridge-chains.js';
import { entryAt, entryIndex } from './view-access.js';

/**
 * cleanup_deposit candidates (rule 3.2, crank cycle step 5): source entries that are
 * Finalized and not cleaned up. Everything below settled_prefix is cleaned up already.
 */

export interface CleanupPlan {
  /** Candidate entries in index order, at most the batch limit. */
  indices: number[];
  /** All candidates, planned or not. */
  pending: number;
}

export function planCleanups(view: BridgeView, limit: number): CleanupPlan {
  const { header } = view.deposits;
  const indices: number[] = [];
  let pending = 0;
  for (let index = entryIndex(header.settledPrefix); index < entryIndex(header.entryCount); index++) {
    const entry = entryAt(view.deposits, index);
    if (entry.status !== 'Finalized' || entry.cleanupCompleted) continue;
    pending++;
    if (indices.length < limit) indices.push(index);
  }
  return { indices, pending };
}
