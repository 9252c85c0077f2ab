import { existsSync } from 'node:fs';
import { fileLedger, unacknowledged } from '../machines/watchdog/breach-ledger.js';
import type { Breach } from '../machines/watchdog/invariants.js';

/**
 * `npm run ops -- acknowledge <breach>` (docs/operating.md "The watchdog"): the operator's word
 * that a breach was looked at, appended to BRIDGE_WATCHDOG_FILE, which the running server reads
 * at its next cycle (its votes resume then, when no other breach is unacknowledged). Only a
 * breach the file holds, not yet acknowledged, can be: a typo acknowledges nothing.
 */

/** What `npm run ops -- flow release` names: the hold id of the flow breaker's error line and of /health's crank.watchdog.flow_held. */
const HOLD_ID = /^flow:\d+:[1-9A-HJ-NP-Za-km-z]{32,44}:\d+$/;

/**
 * `npm run ops -- flow release <hold>`: lets the held transfer through the flow breaker (it is
 * still counted in the window), appended to BRIDGE_WATCHDOG_FILE, read by the server at its next
 * cycle. The id names the entry, the mint and the amount, so a release never lets another
 * transfer through at the same index.
 */
export function releaseFlow(file: string, id: string, by: string): { released: string } | { refused: string } {
  if (!HOLD_ID.test(id))
    return { refused: `${id} is not a hold id (flow:<entry>:<mint>:<amount>, as the error line and /health crank.watchdog.flow_held.id show it)` };
  const ledger = fileLedger(file);
  if (ledger.state().released.has(id)) return { refused: `${id} is already released` };
  ledger.record({ kind: 'flow_release', id, by });
  return { released: id };
}

export type Acknowledgement = { acknowledged: Breach; stillHalting: Breach[] } | { refused: string; unacknowledged: Breach[] };

export function acknowledgeBreach(file: string, id: string, by: string): Acknowledgement {
  if (!existsSync(file))
    return {
      refused: `${file} does not exist: this server has recorded no breach there (is BRIDGE_WATCHDOG_FILE the server's?)`,
      unacknowledged: [],
    };
  const ledger = fileLedger(file);
  const state = ledger.state();
  const breach = state.breaches.get(id);
  const open = unacknowledged(state);
  if (breach === undefined) return { refused: `no breach ${id} in ${file}`, unacknowledged: open };
  if (state.acknowledged.has(id)) return { refused: `breach ${id} is already acknowledged`, unacknowledged: open };
  ledger.record({ kind: 'acknowledged', id, by });
  return { acknowledged: breach, stillHalting: open.filter((one) => one.id !== id) };
}
