import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileLedger, parseLedger, unacknowledged } from '../../../src/machines/watchdog/breach-ledger.js';
import type { Breach } from '../../../src/machines/watchdog/invariants.js';

/** The breach ledger: what a restart reads back decides the halt, neither cleared nor wrongly kept. */

const BREACH: Breach = {
  id: 'finalized_mismatch:target:3:g1',
  invariant: 'finalized_mismatch',
  chain: 'target',
  index: 3,
  bridge: 'x',
  expected: 'y',
};

describe('the breach ledger file', () => {
  it('a restart (a new reader of the same file) keeps an unacknowledged breach and drops an acknowledged one', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ledger-')), 'watchdog.jsonl');
    fileLedger(file).record({ kind: 'breach', ...BREACH });
    expect(unacknowledged(fileLedger(file).state()).map((breach) => breach.id)).toEqual([BREACH.id]);
    fileLedger(file).record({ kind: 'acknowledged', id: BREACH.id, by: 'alice' });
    expect(unacknowledged(fileLedger(file).state())).toEqual([]);
    expect(fileLedger(file).state().breaches.has(BREACH.id)).toBe(true);
  });

  it('a running reader sees a line another process appended; a torn or foreign line is skipped', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ledger-')), 'watchdog.jsonl');
    writeFileSync(file, `${JSON.stringify({ kind: 'breach', ...BREACH })}\n`);
    const server = fileLedger(file);
    expect(unacknowledged(server.state())).toHaveLength(1);
    appendFileSync(file, `{"kind":"acknowledged","id":"${BREACH.id}","by":"ops"}\n{"kind":"ackn`);
    expect(unacknowledged(server.state())).toEqual([]);
    expect(parseLedger('not json\n{"kind":"other"}\n').breaches.size).toBe(0);
  });
});
