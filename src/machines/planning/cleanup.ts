import type { BridgeView } from '../../chain/bridge-chains.js';
import { entryAt, entryIndex } from './view-access.js';

/**
 * cleanup_deposit candidates (rule 3.2, crank cycle step 5): source entries that are
 * Finalized and not cleaned up. Everything below settled_prefix is cleaned up already; the
 * read holds a run from settled_prefix, and candidates in the other runs it holds count too.
 */

export interface CleanupPlan {
  /** Candidate entries in index order, at most the batch limit. */
  indices: number[];
  /** All candidates among the entries read, planned or not. */
  pending: number;
}

export function planCleanups(view: BridgeView, limit: number): CleanupPlan {
  const { header, entries } = view.deposits;
  const settled = entryIndex(header.settledPrefix);
  const entryCount = entryIndex(header.entryCount);
  if (settled < entryCount) entryAt(view.deposits, settled);
  const indices: number[] = [];
  let pending = 0;
  for (const [index, entry] of entries) {
    if (index < settled || index >= entryCount || entry.status !== 'Finalized' || entry.cleanupCompleted) continue;
    pending++;
    if (indices.length < limit) indices.push(index);
  }
  return { indices, pending };
}
