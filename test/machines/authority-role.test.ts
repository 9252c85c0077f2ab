import { describe, expect, it } from 'vitest';
import type { AuthorityView } from '../../src/chain/port/bridge-chains.js';
import {
  afterUnknownHistory,
  HISTORY_DOUBT_WINDOWS,
  initialRole,
  otherSignerActiveMs,
  quietWindowMs,
  roleAfterRead,
  twinProblem,
  type KeyUse,
  type RoleFacts,
  type RoleSettings,
} from '../../src/machines/role.js';

const POLL_MS = 1000;
const WINDOW_MS = quietWindowMs(POLL_MS);
const HANDOFF: RoleSettings = { handoffMs: 60_000, pollIntervalMs: POLL_MS };
const NO_HANDOFF: RoleSettings = { handoffMs: 0, pollIntervalMs: POLL_MS };
const T0 = 1_795_000_000_000;
const OTHER: KeyUse = { chain: 'target', signature: '5Other', slot: 42 };
const OLDER: KeyUse = { chain: 'source', signature: '4Older', slot: 40 };

/** The facts after a sequence of reads: [time, what each read reported]. */
function afterReads(settings: RoleSettings, reads: Array<[number, KeyUse[]]>): RoleFacts {
  return reads.reduce((facts, [atMs, seen]) => roleAfterRead(facts, seen, settings, atMs).facts, initialRole(settings));
}

describe('quietWindowMs', () => {
  it('is three poll intervals plus 10 s', () => {
    expect(quietWindowMs(1000)).toBe(13_000);
    expect(quietWindowMs(15_000)).toBe(55_000);
    expect(quietWindowMs(0)).toBe(10_000);
  });
});

describe('roleAfterRead', () => {
  it('without a handoff: active from the start, and everything seen is a second signer', () => {
    const first = roleAfterRead(initialRole(NO_HANDOFF), [OTHER], NO_HANDOFF, T0);
    expect(first).toEqual({
      facts: { role: 'active', sinceMs: T0, quietSinceMs: T0, heardSinceMs: T0, extraQuietMs: 0, otherSigner: null, waitReason: null },
      foreign: [OTHER],
      change: null,
    });
  });

  it('a new instance stands by from its first read and takes over once the window passed without another signer', () => {
    const start = initialRole(HANDOFF);
    expect(start).toEqual({
      role: 'standby',
      sinceMs: null,
      quietSinceMs: null,
      heardSinceMs: null,
      extraQuietMs: 0,
      otherSigner: null,
      waitReason: null,
    });
    const first = roleAfterRead(start, [], HANDOFF, T0);
    expect(first).toEqual({
      facts: { role: 'standby', sinceMs: T0, quietSinceMs: T0, heardSinceMs: T0, extraQuietMs: 0, otherSigner: null, waitReason: null },
      foreign: [],
      change: null,
    });
    const justBefore = roleAfterRead(first.facts, [], HANDOFF, T0 + WINDOW_MS - 1);
    expect(justBefore.facts.role).toBe('standby');
    expect(justBefore.change).toBeNull();
    const atWindow = roleAfterRead(first.facts, [], HANDOFF, T0 + WINDOW_MS);
    expect(atWindow).toEqual({
      facts: { role: 'active', sinceMs: T0 + WINDOW_MS, quietSinceMs: T0, heardSinceMs: T0, extraQuietMs: 0, otherSigner: null, waitReason: null },
      foreign: [],
      change: { kind: 'taking_over', quietMs: WINDOW_MS },
    });
  });

  it('a standby watches the other signer: not counted, and each sighting restarts the window', () => {
    const watching = afterReads(HANDOFF, [
      [T0, []],
      [T0 + 1000, [OTHER, OLDER]],
      [T0 + 5000, [OTHER]],
    ]);
    expect(watching).toEqual({
      role: 'standby',
      sinceMs: T0,
      quietSinceMs: T0 + 5000,
      heardSinceMs: T0 + 5000,
      extraQuietMs: 0,
      otherSigner: { ...OTHER, activeSinceMs: T0 + 1000, lastSeenAtMs: T0 + 5000 },
      waitReason: 'other_signer',
    });
    expect(roleAfterRead(watching, [OTHER], HANDOFF, T0 + 6000).foreign).toEqual([]);
    expect(roleAfterRead(watching, [], HANDOFF, T0 + 5000 + WINDOW_MS - 1).facts.role).toBe('standby');
    expect(roleAfterRead(watching, [], HANDOFF, T0 + 5000 + WINDOW_MS).change).toEqual({ kind: 'taking_over', quietMs: WINDOW_MS });
  });

  it('an active instance that sees another signer counts every transaction and stands by, for the window plus a random part of it', () => {
    const active = afterReads(HANDOFF, [
      [T0, []],
      [T0 + WINDOW_MS, []],
    ]);
    expect(active.role).toBe('active');
    const at = T0 + WINDOW_MS + 2000;
    const stood = roleAfterRead(active, [OTHER, OLDER], HANDOFF, at, () => 0.5);
    expect(stood).toEqual({
      facts: {
        role: 'standby',
        sinceMs: at,
        quietSinceMs: at,
        heardSinceMs: at,
        extraQuietMs: WINDOW_MS / 2,
        otherSigner: { ...OTHER, activeSinceMs: at, lastSeenAtMs: at },
        waitReason: 'other_signer',
      },
      foreign: [OTHER, OLDER],
      change: { kind: 'standing_by', other: OTHER },
    });
    const justBefore = at + WINDOW_MS + WINDOW_MS / 2 - 1;
    expect(roleAfterRead(stood.facts, [], HANDOFF, justBefore).facts.role).toBe('standby');
    expect(roleAfterRead(stood.facts, [], HANDOFF, justBefore + 1)).toMatchObject({
      facts: { role: 'active', extraQuietMs: 0 },
      change: { kind: 'taking_over', quietMs: WINDOW_MS + WINDOW_MS / 2 },
    });
    // The largest draw stays below two windows.
    expect(roleAfterRead(active, [OTHER], HANDOFF, at, () => 0.999_999).facts.extraQuietMs).toBeLessThan(WINDOW_MS);
  });
});

describe('twinProblem', () => {
  const watching = afterReads(HANDOFF, [
    [T0, []],
    [T0 + 1000, [OTHER]],
    [T0 + 50_000, [OTHER]],
  ]);

  it('is null up to BRIDGE_HANDOFF_SECS of the other signer seen signing, then names its latest transaction and how long', () => {
    expect(otherSignerActiveMs(watching)).toBe(49_000);
    const atLimit = roleAfterRead(watching, [OTHER], HANDOFF, T0 + 1000 + HANDOFF.handoffMs).facts;
    expect(twinProblem(atLimit, HANDOFF.handoffMs)).toBeNull();
    const past = roleAfterRead(atLimit, [OTHER], HANDOFF, T0 + 1000 + HANDOFF.handoffMs + 1).facts;
    expect(twinProblem(past, HANDOFF.handoffMs)).toBe(
      "another instance has been signing with this authority's key for 60 s, longer than BRIDGE_HANDOFF_SECS (60 s); its latest transaction is 5Other " +
        'on the destination chain (slot 42); this server stands by. A rollout would have ended by now: find and stop the other instance (SPEC §8), ' +
        'or raise BRIDGE_HANDOFF_SECS if the pair is an intended hot standby',
    );
  });

  it('is null for an active instance, a standby with no other signer, and without a handoff', () => {
    const long = roleAfterRead(watching, [OTHER], HANDOFF, T0 + 10 * HANDOFF.handoffMs).facts;
    expect(twinProblem({ ...long, role: 'active' }, HANDOFF.handoffMs)).toBeNull();
    expect(otherSignerActiveMs({ ...long, role: 'active' })).toBe(0);
    expect(twinProblem({ ...long, otherSigner: null }, HANDOFF.handoffMs)).toBeNull();
    expect(twinProblem(long, 0)).toBeNull();
  });
});

describe('afterUnknownHistory', () => {
  const authority = (incomplete: boolean): AuthorityView => ({
    source: { balance: 1, transactions: [] },
    target: { balance: 1, transactions: [], ...(incomplete ? { historyIncomplete: true } : {}) },
  });

  const unknownAfter = (facts: RoleFacts, incomplete: boolean, atMs: number, nonceSignal = false) =>
    afterUnknownHistory(facts, authority(incomplete), HANDOFF, atMs, nonceSignal).facts;

  it('a read whose history left entries unchecked is not quiet: the standby does not take over at it, and does at the first complete read a window later', () => {
    const first = roleAfterRead(initialRole(HANDOFF), [], HANDOFF, T0).facts;
    const unknownAt = T0 + WINDOW_MS;
    const held = roleAfterRead(unknownAfter(first, true, unknownAt), [], HANDOFF, unknownAt);
    expect(held.facts).toMatchObject({ role: 'standby', quietSinceMs: unknownAt, waitReason: 'history_incomplete' });
    expect(held.change).toBeNull();
    expect(roleAfterRead(unknownAfter(held.facts, false, unknownAt + WINDOW_MS), [], HANDOFF, unknownAt + WINDOW_MS).change).toEqual({
      kind: 'taking_over',
      quietMs: WINDOW_MS,
    });
  });

  it('in nonce mode, history that stays incomplete holds a standby at most HISTORY_DOUBT_WINDOWS windows after the latest sighting', () => {
    let facts = roleAfterRead(initialRole(HANDOFF), [], HANDOFF, T0).facts;
    let tookOverAt: number | undefined;
    for (let at = T0 + 1000; at <= T0 + 10 * WINDOW_MS && tookOverAt === undefined; at += 1000) {
      const decided = roleAfterRead(unknownAfter(facts, true, at, true), [], HANDOFF, at);
      facts = decided.facts;
      if (decided.change?.kind === 'taking_over') tookOverAt = at;
    }
    expect(tookOverAt).toBe(T0 + HISTORY_DOUBT_WINDOWS * WINDOW_MS);
  });

  it('without the nonce signal (blockhash mode) incomplete history holds a standby for as long as it lasts', () => {
    let facts = roleAfterRead(initialRole(HANDOFF), [], HANDOFF, T0).facts;
    for (let at = T0 + 1000; at <= T0 + 10 * WINDOW_MS; at += 1000) {
      const decided = roleAfterRead(unknownAfter(facts, true, at), [], HANDOFF, at);
      expect(decided.change).toBeNull();
      facts = decided.facts;
    }
  });

  it('an active instance goes on: unknown is not a second signer', () => {
    const active = roleAfterRead(initialRole(NO_HANDOFF), [], NO_HANDOFF, T0).facts;
    expect(afterUnknownHistory(active, authority(true), NO_HANDOFF, T0 + 1000, false)).toEqual({ facts: active, restarted: false });
  });
});
