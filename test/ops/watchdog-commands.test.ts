import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseLedger } from '../../src/machines/watchdog/breach-ledger.js';
import { ensureBuilt } from '../support/server-process.js';
import { ops } from './ops-cli.js';

/**
 * `npm run ops -- acknowledge` and `npm run ops -- audit`, the built CLI spawned: an
 * acknowledgement lands in BRIDGE_WATCHDOG_FILE with one audit line; a wrong or repeated one is
 * refused (exit 1) naming the open breaches; audit prints the audit lines of a log.
 */

beforeAll(ensureBuilt, 180_000);

const BREACH = {
  kind: 'breach',
  id: 'finalized_mismatch:target:0:g4',
  invariant: 'finalized_mismatch',
  chain: 'target',
  index: 0,
  bridge: 'Confirmed(8000)',
  expected: 'amount 800',
};

function env(file: string): Record<string, string> {
  return {
    BRIDGE_SOURCE_RPC_URL: 'http://127.0.0.1:1',
    BRIDGE_TARGET_RPC_URL: 'http://127.0.0.1:2',
    BRIDGE_SOURCE_CHAIN_ID: '1',
    BRIDGE_TARGET_CHAIN_ID: '2',
    BRIDGE_AUTHORITY_KEYPAIR: '/nonexistent/never-opened.json',
    BRIDGE_ON_INVARIANT_BREACH: 'halt',
    BRIDGE_WATCHDOG_FILE: file,
  };
}

function auditRecords(stderr: string): Array<Record<string, unknown>> {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((record) => record['msg'] === 'audit');
}

describe('npm run ops -- acknowledge', () => {
  it('records the acknowledgement once, with one audit line; refuses a repeat and an unknown id', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ack-')), 'breaches.jsonl');
    writeFileSync(file, `${JSON.stringify(BREACH)}\n`);

    const done = await ops(['acknowledge', BREACH.id, '--json'], env(file));
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toEqual({ acknowledged: BREACH.id, still_unacknowledged: [] });
    expect(auditRecords(done.stderr).map((record) => record['audit'])).toEqual([
      expect.objectContaining({ what: `ops acknowledge ${BREACH.id}`, outcome: 'acknowledged' }),
    ]);
    expect([...parseLedger(readFileSync(file, 'utf8')).acknowledged]).toEqual([BREACH.id]);

    const again = await ops(['acknowledge', BREACH.id], env(file));
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already acknowledged');
    const unknown = await ops(['acknowledge', 'tracker_rewound:source:g0:s5'], env(file));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no breach tracker_rewound:source:g0:s5');
    expect(auditRecords(unknown.stderr)).toHaveLength(1);
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(2);
  });
});

describe('npm run ops -- audit', () => {
  it('prints the audit lines of a log, nothing else', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-'));
    const log = join(dir, 'server.log');
    const lines = [
      { level: 'info', time: '2026-12-07T19:00:00.000Z', msg: 'request completed', url: '/health' },
      {
        level: 'info',
        time: '2026-12-07T19:00:01.000Z',
        msg: 'audit',
        audit: { address: '10.0.0.5', user: 'ops-alice', what: 'POST /crank/once', outcome: 200 },
      },
      { level: 'info', time: '2026-12-07T19:00:02.000Z', msg: 'audit', audit: { address: '10.0.0.6', user: null, what: 'POST /kill', outcome: 401 } },
    ];
    writeFileSync(log, `${lines.map((line) => JSON.stringify(line)).join('\n')}\nnot json\n`);
    const printed = await ops(['audit', log], env(join(dir, 'unused')));
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout.trim().split('\n')).toEqual([
      '2026-12-07T19:00:01.000Z  10.0.0.5  ops-alice  POST /crank/once  200',
      '2026-12-07T19:00:02.000Z  10.0.0.6  -  POST /kill  401',
    ]);
  });
});
