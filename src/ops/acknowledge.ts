import { existsSync } from 'node:fs';
import { fileLedger, unacknowledged } from '../machines/watchdog/breach-ledger.js';
import type { Breach } from '../machines/watchdog/invariants.js';

/**
 * `npm run ops -- acknowledge <breach>` (docs/operating.md "The watchdog"): the operator's word
 * that a breach was looked at, appended to BRIDGE_WATCHDOG_FILE, which the running server reads
 * at its next cycle (its votes resume then, when no other breach is unacknowledged). Only a
 * breach the file holds, not yet acknowledged, can be: a typo acknowledges nothing.
 */

export type Acknowledgement = { acknowledged: Breach; stillHalting: Breach[] } | { refused: string; unacknowledged: Breach[] };

export function acknowledgeBreach(file: string, id: string, by: string): Acknowledgement {
  if (!existsSync(file)) return { refused: `${file} does not exist: this server has recorded no breach there (is BRIDGE_WATCHDOG_FILE the server's?)`, unacknowledged: [] };
  const ledger = fileLedger(file);
  const state = ledger.state();
  const breach = state.breaches.get(id);
  const open = unacknowledged(state);
  if (breach === undefined) return { refused: `no breach ${id} in ${file}`, unacknowledged: open };
  if (state.acknowledged.has(id)) return { refused: `breach ${id} is already acknowledged`, unacknowledged: open };
  ledger.record({ kind: 'acknowledged', id, by });
  return { acknowledged: breach, stillHalting: open.filter((one) => one.id !== id) };
}
