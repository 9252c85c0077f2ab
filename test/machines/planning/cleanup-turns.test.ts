import { describe, expect, it } from 'vitest';
import { planCleanups } from '../../../src/machines/planning/cycle-plan.js';
import { CLEANUP_GRACE_POLLS, cleanupGraceMs, cleanupTurn } from '../../../src/machines/planning/cleanup-turns.js';
import { bridgeView, deposit } from '../support/bridge-view.js';

/** Three authorities; this one holds slot 0, so entries 0 and 3 are its turns. */
const ALL_VOTED = 0b111;
const finalized = (n: number, yesVotes = ALL_VOTED) =>
  deposit(n, { status: 'Finalized', yesVotes, result: { kind: 'Rejected', reason: 'InternalError' } });
const viewOf = (...entries: ReturnType<typeof finalized>[]) =>
  bridgeView({ deposits: entries, withdrawals: [], ownSourceNext: entries.length, ownTargetNext: entries.length });
const GRACE_MS = 4_000;

describe('cleanup turns', () => {
  it("plans this authority's turns at once and leaves the others' for the grace, from the first sighting", () => {
    const view = viewOf(...[0, 1, 2, 3, 4, 5].map((n) => finalized(n)));
    const first = planCleanups(view, 64, { waits: [], atMs: 1_000, graceMs: GRACE_MS });
    expect(first.indices).toEqual([0, 3]);
    expect(first.pending).toBe(2);
    expect(first.waits).toEqual([1, 2, 4, 5].map((index) => ({ index, sinceMs: 1_000 })));

    const during = planCleanups(view, 64, { waits: first.waits, atMs: 1_000 + GRACE_MS - 1, graceMs: GRACE_MS });
    expect(during.indices).toEqual([0, 3]);
    expect(during.waits).toEqual(first.waits);

    const after = planCleanups(view, 64, { waits: first.waits, atMs: 1_000 + GRACE_MS, graceMs: GRACE_MS });
    expect(after).toEqual({ indices: [0, 1, 2, 3, 4, 5], pending: 6, waits: [] });
  });

  it('passes the turn over an authority that cast no vote on the entry, to the next one that did', () => {
    // Entry 1: slot 1 did not vote, slot 2 did. Entry 2: slot 2 did not vote, the turn wraps to slot 0 (this one).
    const view = viewOf(finalized(0), finalized(1, 0b101), finalized(2, 0b011));
    const plan = planCleanups(view, 64, { waits: [], atMs: 0, graceMs: GRACE_MS });
    expect(plan.indices).toEqual([0, 2]);
    expect(plan.waits).toEqual([{ index: 1, sinceMs: 0 }]);
    expect([0, 1, 2].map((index) => cleanupTurn(index, view.deposits.entries.get(index)!, 3))).toEqual([0, 2, 0]);
  });

  it('a no vote counts as taking part', () => {
    const view = viewOf(finalized(0), deposit(1, { status: 'Finalized', yesVotes: 0b001, noVotes: 0b010 }));
    expect(planCleanups(view, 64, { waits: [], atMs: 0, graceMs: GRACE_MS }).waits).toEqual([{ index: 1, sinceMs: 0 }]);
  });

  it('carries a wait only while its entry is still a candidate: one cleaned up meanwhile is dropped', () => {
    const view = viewOf(finalized(0), deposit(1, { status: 'Finalized', yesVotes: ALL_VOTED, cleanupCompleted: true }), finalized(2));
    const plan = planCleanups(view, 64, {
      waits: [
        { index: 1, sinceMs: 0 },
        { index: 2, sinceMs: 10 },
      ],
      atMs: 100,
      graceMs: GRACE_MS,
    });
    expect(plan.waits).toEqual([{ index: 2, sinceMs: 10 }]);
  });

  it('a grace of 0 plans every candidate (no turns)', () => {
    const view = viewOf(finalized(0), finalized(1), finalized(2));
    expect(planCleanups(view, 64, { waits: [], atMs: 0, graceMs: 0 })).toEqual({ indices: [0, 1, 2], pending: 3, waits: [] });
  });

  it('the grace is CLEANUP_GRACE_POLLS poll intervals', () => {
    expect(cleanupGraceMs(15_000)).toBe(CLEANUP_GRACE_POLLS * 15_000);
  });
});
