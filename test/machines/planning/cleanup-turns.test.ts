import { describe, expect, it } from 'vitest';
import { planCleanups } from '../../../src/machines/planning/cycle-plan.js';
import { CLEANUP_GRACE_READS, cleanupTurn, type CleanupTurns } from '../../../src/machines/planning/cleanup-turns.js';
import { bridgeView, deposit } from '../support/bridge-view.js';

/** Three authorities; this one holds slot 0, so with every vote cast entries 0 and 3 are its turns. */
const ALL_VOTED = 0b111;
const finalized = (n: number, yesVotes = ALL_VOTED) =>
  deposit(n, { status: 'Finalized', yesVotes, result: { kind: 'Rejected', reason: 'InternalError' } });
const viewOf = (...entries: ReturnType<typeof finalized>[]) =>
  bridgeView({ deposits: entries, withdrawals: [], ownSourceNext: entries.length, ownTargetNext: entries.length });
const FIRST_READ: CleanupTurns = { waits: [], graceReads: CLEANUP_GRACE_READS };

describe('cleanup turns', () => {
  it("plans this authority's turns at once and the others' at the CLEANUP_GRACE_READS-th read after the first that showed them", () => {
    const view = viewOf(...[0, 1, 2, 3, 4, 5].map((n) => finalized(n)));
    let plan = planCleanups(view, 64, FIRST_READ);
    expect(plan.indices).toEqual([0, 3]);
    expect(plan.pending).toBe(2);
    expect(plan.waits).toEqual([1, 2, 4, 5].map((index) => ({ index, reads: 0 })));
    for (let read = 1; read < CLEANUP_GRACE_READS; read++) {
      plan = planCleanups(view, 64, { ...FIRST_READ, waits: plan.waits });
      expect(plan.indices).toEqual([0, 3]);
      expect(plan.waits).toEqual([1, 2, 4, 5].map((index) => ({ index, reads: read })));
    }
    plan = planCleanups(view, 64, { ...FIRST_READ, waits: plan.waits });
    expect(plan).toEqual({ indices: [0, 1, 2, 3, 4, 5], pending: 6, waits: [1, 2, 4, 5].map((index) => ({ index, reads: CLEANUP_GRACE_READS })) });
    // Planned past the grace and still there (its cleanup failed): planned again at once.
    expect(planCleanups(view, 64, { ...FIRST_READ, waits: plan.waits }).indices).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('passes the turn over an authority that cast no vote on the entry, to the next one that did', () => {
    // Entry 1: slot 1 did not vote, slot 2 did. Entry 2: slot 2 did not vote, the turn wraps to slot 0 (this one).
    const view = viewOf(finalized(0), finalized(1, 0b101), finalized(2, 0b011));
    const plan = planCleanups(view, 64, FIRST_READ);
    expect(plan.indices).toEqual([0, 2]);
    expect(plan.waits).toEqual([{ index: 1, reads: 0 }]);
    expect([0, 1, 2].map((index) => cleanupTurn(index, view.deposits.entries.get(index)!, 3))).toEqual([0, 2, 0]);
  });

  it('a no vote counts as taking part; an entry with no vote at all is anyone’s', () => {
    const view = viewOf(finalized(0), deposit(1, { status: 'Finalized', yesVotes: 0b001, noVotes: 0b010 }), finalized(2, 0));
    const plan = planCleanups(view, 64, FIRST_READ);
    expect(plan.indices).toEqual([0, 2]);
    expect(plan.waits).toEqual([{ index: 1, reads: 0 }]);
  });

  it('carries a wait only while its entry is still a candidate: one cleaned up meanwhile is dropped', () => {
    const view = viewOf(finalized(0), deposit(1, { status: 'Finalized', yesVotes: ALL_VOTED, cleanupCompleted: true }), finalized(2));
    const plan = planCleanups(view, 64, {
      ...FIRST_READ,
      waits: [
        { index: 1, reads: 0 },
        { index: 2, reads: 0 },
      ],
    });
    expect(plan.waits).toEqual([{ index: 2, reads: 1 }]);
  });

  it('a grace of 0 reads plans every candidate (no turns)', () => {
    const view = viewOf(finalized(0), finalized(1), finalized(2));
    expect(planCleanups(view, 64, { waits: [], graceReads: 0 })).toEqual({ indices: [0, 1, 2], pending: 3, waits: [] });
  });
});
