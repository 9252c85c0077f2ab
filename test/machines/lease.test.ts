import { describe, expect, it } from 'vitest';
import type { AuthorityView, LeaseObservation } from '../../src/chain/port/bridge-chains.js';
import type { CrankSettings } from '../../src/machines/crank-context.js';
import type { CyclePlan } from '../../src/machines/planning/cycle-plan.js';
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

const plan = (pending: number) => ({ ackDeposit: { pending }, ackWithdraw: { pending: 0 }, cleanup: { pending: 0 } }) as unknown as CyclePlan;
const WORK = plan(1);
const IDLE = plan(0);

function read(facts: Facts, lease: LeaseObservation, atMs: number, authority = QUIET, nonceSignal = false, work = WORK) {
  return decideAfterRead(facts, { authority, lease, nonceSignal, plan: work }, SETTINGS, atMs);
}

/** A read whose history shows another instance's vote. */
const SIGNED: AuthorityView = { ...QUIET, target: { balance: 1, transactions: [{ signature: 'theirs', slot: 30, signedHere: false }] } };

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
    // No holder was ever seen: the line says the lease was free, not released.
    expect(took.change).toEqual({ kind: 'taking_over', quietMs: 500, lease: 'free' });
  });

  it('a lease seen held, then free: released by its holder, taken at once, and said so', () => {
    const waiting = read(read(start, held('THEIRS'), T0), held('THEIRS'), T0 + 1000);
    // The holder's last votes land with the release: seen in the read that finds the lease free, they do not hold the taking back.
    const free = read(waiting, FREE, T0 + 2000, SIGNED);
    expect(free.lease.want).toEqual({ kind: 'take', seen: FREE });
    const took = leaseAfterStep(free.lease, free.role, { kind: 'took', value: 'MINE', slot: 31, signature: 's' }, T0 + 2500);
    expect(took.change).toMatchObject({ kind: 'taking_over', lease: 'released' });
  });

  it('an instance without the lease signing while the lease reads free is waited out for the quiet window', () => {
    const first = read(start, FREE, T0);
    const refused = leaseAfterStep(first.lease, first.role, { kind: 'not_taken', seen: FREE, why: 'timeout' }, T0);
    let facts: Facts = { role: refused.role, lease: { ...refused.lease, refusedAtMs: null } };
    facts = read(facts, FREE, T0 + 1000, SIGNED);
    expect(facts.lease).toMatchObject({ status: 'released', freeSignerAtMs: T0 + 1000, want: null });
    expect(read(facts, FREE, T0 + 1000 + WINDOW_MS - 1).lease.want).toBeNull();
    expect(read(facts, FREE, T0 + 1000 + WINDOW_MS).lease.want).toEqual({ kind: 'take', seen: FREE });
  });

  it('an idle holder keeps its lease: a standby takes it over only once work has waited the quiet window', () => {
    let facts: Facts = read(start, held('THEIRS'), T0, QUIET, false, IDLE);
    for (let at = T0 + 1000; at <= T0 + 3 * WINDOW_MS; at += 1000) {
      facts = read(facts, held('THEIRS'), at, QUIET, false, IDLE);
      expect(facts.lease.want).toBeNull();
      expect(facts.role.role).toBe('standby');
    }
    const workAt = T0 + 3 * WINDOW_MS + 1000;
    facts = read(facts, held('THEIRS'), workAt);
    expect(facts.lease).toMatchObject({ want: null, workSinceMs: workAt });
    expect(read(facts, held('THEIRS'), workAt + WINDOW_MS - 1).lease.want).toBeNull();
    expect(read(facts, held('THEIRS'), workAt + WINDOW_MS).lease.want).toEqual({ kind: 'take', seen: held('THEIRS') });
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

  it('a holder believes a loss only on proof; a doubt keeps it active; proof stands it by at once', () => {
    const took = leaseAfterStep(
      read(start, FREE, T0).lease,
      read(start, FREE, T0).role,
      { kind: 'took', value: 'MINE', slot: 11, signature: 's' },
      T0,
    );
    const holder = { role: took.role, lease: took.lease };
    expect(read(holder, held('MINE', 20), T0 + 1000).lease.want).toBeNull();
    const doubt = read(holder, held('OTHER', 21), T0 + 2000);
    expect(doubt.role.role).toBe('active');
    expect(doubt.lease.want).toEqual({ kind: 'confirm', seen: held('OTHER', 21), value: 'MINE' });
    expect(leaseAfterStep(doubt.lease, doubt.role, { kind: 'doubt', why: 'one endpoint' }, T0 + 2100)).toMatchObject({
      role: { role: 'active' },
      lease: { status: 'held', value: 'MINE', want: null, note: 'one endpoint' },
      change: null,
    });
    const lost = leaseAfterStep(doubt.lease, doubt.role, { kind: 'lost', seen: held('OTHER', 22), proof: 'two endpoints agree' }, T0 + 2100);
    expect(lost.role).toMatchObject({ role: 'standby', sinceMs: T0 + 2100, quietSinceMs: T0 + 2100 });
    expect(lost.lease).toMatchObject({ status: 'taken', value: 'OTHER' });
    expect(lost.change).toEqual({ kind: 'lease_lost', holder: 'OTHER', proof: 'two endpoints agree' });
  });

  it('a lease one read calls unusable is asked of the other endpoints at once, then once per window, never taken on that read', () => {
    const unusable: LeaseObservation = { state: 'unusable', reason: 'owned by another program', slot: 10 };
    const first = read(start, unusable, T0);
    expect(first.lease).toMatchObject({ status: 'unusable', note: 'owned by another program', want: { kind: 'take', seen: unusable } });
    const asked = leaseAfterStep(first.lease, first.role, { kind: 'not_taken', seen: FREE, why: 'a doubt on that endpoint' }, T0);
    const facts = { role: asked.role, lease: asked.lease };
    expect(read(facts, unusable, T0 + WINDOW_MS - 1).lease.want).toBeNull();
    expect(read(facts, unusable, T0 + WINDOW_MS).lease.want).toEqual({ kind: 'take', seen: unusable });
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
