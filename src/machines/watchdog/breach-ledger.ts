import { appendFileSync, readFileSync, statSync } from 'node:fs';
import type { Breach } from './invariants.js';

/**
 * The breaches a halt rests on and their acknowledgements (and the flow breaker's releases), kept on the host
 * (BRIDGE_WATCHDOG_FILE): one JSON line per fact, appended, never rewritten. The server appends
 * a breach when it confirms one; `npm run ops -- acknowledge <breach>` appends the
 * acknowledgement; the server reads the file again when it changed (one stat per cycle). A
 * restart reads it whole: an unacknowledged breach still halts (the restart does not clear it),
 * an acknowledged one neither halts nor is raised again (the restart does not wrongly keep it).
 */

type LedgerLine = ({ kind: 'breach' } & Breach) | { kind: 'acknowledged'; id: string; by: string } | { kind: 'flow_release'; id: string; by: string };

export interface LedgerState {
  /** Every breach recorded, by id, in the order first recorded. */
  breaches: Map<string, Breach>;
  acknowledged: Set<string>;
  /** Transfers the flow breaker holds that an operator let through (./flow-breaker.ts holdId). */
  released: Set<string>;
}

export interface BreachLedger {
  /** The file's facts, read again only when it changed. */
  state(): LedgerState;
  record(line: LedgerLine): void;
}

/** The ledger in memory only: BRIDGE_ON_INVARIANT_BREACH=continue, where nothing halts and nothing needs to survive a restart. */
export function memoryLedger(): BreachLedger {
  const state: LedgerState = { breaches: new Map(), acknowledged: new Set(), released: new Set() };
  return { state: () => state, record: (line) => apply(state, line) };
}

export function fileLedger(file: string): BreachLedger {
  let seen: { size: number; mtimeMs: number } | undefined;
  let state: LedgerState = { breaches: new Map(), acknowledged: new Set(), released: new Set() };
  return {
    state: () => {
      const stat = statOf(file);
      if (stat === undefined) return state;
      if (seen === undefined || stat.size !== seen.size || stat.mtimeMs !== seen.mtimeMs) {
        state = parseLedger(readFileSync(file, 'utf8'));
        seen = stat;
      }
      return state;
    },
    record: (line) => {
      appendFileSync(file, `${JSON.stringify({ ...line, at: new Date().toISOString() })}\n`, { mode: 0o600 });
      apply(state, line);
    },
  };
}

/** The ledger's lines; a line that does not parse (a torn last write) is skipped, never a crash. */
export function parseLedger(text: string): LedgerState {
  const state: LedgerState = { breaches: new Map(), acknowledged: new Set(), released: new Set() };
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    try {
      const line = JSON.parse(raw) as LedgerLine;
      if (line.kind === 'breach' || line.kind === 'acknowledged' || line.kind === 'flow_release') apply(state, line);
    } catch {
      // A torn line: skipped (see above).
    }
  }
  return state;
}

/** Breaches not acknowledged, oldest first: what a halt waits on. */
export function unacknowledged(state: LedgerState): Breach[] {
  return [...state.breaches.values()].filter((breach) => !state.acknowledged.has(breach.id));
}

function apply(state: LedgerState, line: LedgerLine): void {
  if (line.kind === 'acknowledged') state.acknowledged.add(line.id);
  else if (line.kind === 'flow_release') state.released.add(line.id);
  else if (!state.breaches.has(line.id)) {
    const { kind: _kind, ...breach } = line;
    state.breaches.set(line.id, breach);
  }
}

function statOf(file: string): { size: number; mtimeMs: number } | undefined {
  try {
    const { size, mtimeMs } = statSync(file);
    return { size, mtimeMs };
  } catch {
    return undefined;
  }
}
