import { describe, expect, it } from 'vitest';
import type { AuthorityView, LeaseObservation } from '../../src/chain/port/bridge-chains.js';
import type { CrankSettings } from '../../src/machines/crank-context.js';
import { initialLease, leaseAfterStep, leaseAfterStepFailure, type LeaseFacts } from '../../src/machines/lease.js';
import { decideAfterRead } from '../../src/machines/read-decision.js';
import { initialRole, quietWindowMs, type RoleFacts } from '../../src/machines/role.js';

const POLL_MS = 1000;
const WINDOW_MS = quietWindowMs(POLL_MS);
const SETTINGS = { handoffMs: 300_000, pollIntervalMs: POLL_MS, dryRun: false, onForeignSigner: 'continue' } as CrankSettings;
const T0 = 1_795_000_000_000;
const QUIET: AuthorityView = { source: { balance: 1, transactions: [] }, target: { balance: 1, transactions: [] } };
const FREE: LeaseObservation = { state: 'free', lamports: 0, slot: 10 };
const held = (value: string, slot = 10): LeaseObservation => ({ state: 'held', value, lamports: 1_447_680, slot });

type Facts = { role: RoleFacts; lease: LeaseFacts };
const start: Facts = { role: initialRole(SETTINGS), lease: initialLease(SETTINGS) };

function read(facts: Facts, lease: LeaseObservation, atMs: number, authority = QUIET, nonceSignal = false) {
  return decideAfterRead(facts, { authority, lease, nonceSignal }, SETTINGS, atMs);
}

describe('the signing lease', () => {
  it('is off without a handoff and in a dry run: the quiet window alone decides', () => {
    expect(initialLease({ ...SETTINGS, handoffMs: 0 }).status).toBe('off');
    expect(initialLease({ ...SETTINGS, dryRun: true }).status).toBe('off');
    const facts = { role: initialRole(SETTINGS), lease: initialLease({ ...SETTINGS, dryRun: true }) };
    expect(read(facts, FREE, T0).lease.want).toBeNull();
  });

  it('a free lease is taken at the first read, and taking it makes the instance active at once', () => {
    const first = read(start, FREE, T0);
    expect(first.role.role).toBe('standby');
    expect(first.lease).toMatchObject({ status: 'released', want: { kind: 'take', seen: FREE } });
    const took = leaseAfterStep(first.lease, first.role, { kind: 'took', value: 'MINE', slot: 11, signature: 's' }, T0 + 500);
    expect(took.role.role).toBe('active');
    expect(took.lease).toMatchObject({ status: 'held', value: 'MINE', want: null });
    expect(took.change).toEqual({ kind: 'taking_over', quietMs: 500, lease: 'released' });
  });

  it('a held lease waits the quiet window, then is taken over against the value seen, never before', () => {
    const first = read(start, held('THEIRS'), T0);
    expect(first.lease).toMatchObject({ status: 'waiting', value: 'THEIRS', want: null });
    const before = read(first, held('THEIRS'), T0 + WINDOW_MS - 1);
    expect(before.lease.want).toBeNull();
    expect(before.role.role).toBe('standby');
    const at = read(before, held('THEIRS'), T0 + WINDOW_MS);
    // The window passing is not a takeover yet: still a standby until the taking lands.
    expect(at.role.role).toBe('standby');
    expect(at.change).toBeNull();
    expect(at.lease.want).toEqual({ kind: 'take', seen: held('THEIRS') });
  });

  it('losing the race: the winner is alive, so the window starts again from the loss', () => {
    const first = read(start, FREE, T0);
    const lost = leaseAfterStep(first.lease, first.role, { kind: 'not_taken', seen: held('WINNER', 12), why: 'refused' }, T0 + 700);
    expect(lost.role).toMatchObject({ role: 'standby', quietSinceMs: T0 + 700 });
    expect(lost.lease).toMatchObject({ status: 'waiting', value: 'WINNER', note: 'refused' });
    expect(lost.change).toBeNull();
  });

  it('after a refused taking, a lease that reads free is taken again only once the quiet window has passed (a node that keeps saying "free" costs one taking per window)', () => {
    const first = read(start, FREE, T0);
    const refused = leaseAfterStep(first.lease, first.role, { kind: 'not_taken', seen: FREE, why: 'landed with AccountAlreadyInUse' }, T0);
    const facts = { role: refused.role, lease: refused.lease };
    expect(read(facts, FREE, T0 + WINDOW_MS - 1).lease.want).toBeNull();
    expect(read(facts, FREE, T0 + WINDOW_MS).lease.want).toEqual({ kind: 'take', seen: FREE });
  });

  it('a holder believes a loss only when a second read agrees; then it stands by at once', () => {
    const took = leaseAfterStep(read(start, FREE, T0).lease, read(start, FREE, T0).role, { kind: 'took', value: 'MINE', slot: 11, signature: 's' }, T0);
    const holder = { role: took.role, lease: took.lease };
    expect(read(holder, held('MINE', 20), T0 + 1000).lease.want).toBeNull();
    const doubt = read(holder, held('OTHER', 21), T0 + 2000);
    expect(doubt.role.role).toBe('active');
    expect(doubt.lease.want).toEqual({ kind: 'confirm', seen: held('OTHER', 21), value: 'MINE' });
    expect(leaseAfterStep(doubt.lease, doubt.role, { kind: 'still_held' }, T0 + 2100)).toMatchObject({ role: { role: 'active' }, lease: { status: 'held', want: null }, change: null });
    const lost = leaseAfterStep(doubt.lease, doubt.role, { kind: 'lost', seen: held('OTHER', 22) }, T0 + 2100);
    expect(lost.role).toMatchObject({ role: 'standby', sinceMs: T0 + 2100, quietSinceMs: T0 + 2100 });
    expect(lost.lease).toMatchObject({ status: 'taken', value: 'OTHER' });
    expect(lost.change).toEqual({ kind: 'lease_lost', holder: 'OTHER' });
  });

  it('a failed step changes nothing but says why', () => {
    const first = read(start, FREE, T0);
    const failed = leaseAfterStepFailure(first, 'timeout');
    expect(failed.role).toBe(first.role);
    expect(failed.lease).toMatchObject({ status: 'released', want: null, note: 'the leasing step failed: timeout' });
  });

  it('history left unchecked in nonce mode delays a takeover by at most two windows; the restart is reported', () => {
    const incomplete: AuthorityView = { ...QUIET, target: { ...QUIET.target, historyIncomplete: true } };
    let facts: Facts = read(start, held('THEIRS'), T0);
    let wantedAt: number | undefined;
    let reported = 0;
    for (let at = T0 + 1000; wantedAt === undefined && at <= T0 + 10 * WINDOW_MS; at += 1000) {
      const next = read(facts, held('THEIRS'), at, incomplete, true);
      if (next.waits !== null) reported += 1;
      if (next.lease.want !== null) wantedAt = at;
      facts = next;
    }
    expect(wantedAt).toBe(T0 + 2 * WINDOW_MS);
    expect(reported).toBe(WINDOW_MS / 1000);
  });
});
