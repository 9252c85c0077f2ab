import { describe, expect, it } from 'vitest';
import { reconcileVotes, type VoteDecision } from '../../../../src/chain/client/submit/reconcile-votes.js';

const votes = (...indices: number[]) => indices.map((index) => ({ index }));

describe('reconcileVotes: what may be sent after an unknown outcome', () => {
  it.each<{ why: string; planned: number[]; nextIndex: number; landed: number[]; decision: VoteDecision<{ index: number }> }>([
    {
      why: 'nothing landed: send everything',
      planned: [5, 6, 7],
      nextIndex: 5,
      landed: [],
      decision: { kind: 'send', votes: votes(5, 6, 7) },
    },
    {
      why: 'our lost transaction landed the first two: send the rest',
      planned: [5, 6, 7],
      nextIndex: 7,
      landed: [5, 6],
      decision: { kind: 'send', votes: votes(7) },
    },
    {
      why: 'everything landed: send nothing',
      planned: [5, 6, 7],
      nextIndex: 8,
      landed: [5, 6, 7],
      decision: { kind: 'send', votes: [] },
    },
    {
      why: 'next_index moved past votes no known transaction carried: another signer',
      planned: [5, 6, 7],
      nextIndex: 7,
      landed: [],
      decision: { kind: 'unexplained', indices: [5, 6], nextIndex: 7 },
    },
    {
      why: 'partly explained is still unexplained',
      planned: [5, 6, 7],
      nextIndex: 8,
      landed: [5],
      decision: { kind: 'unexplained', indices: [6, 7], nextIndex: 8 },
    },
    {
      why: 'rewound below the plan (threshold no): stale',
      planned: [5, 6, 7],
      nextIndex: 3,
      landed: [],
      decision: { kind: 'stale', firstIndex: 5, nextIndex: 3 },
    },
    {
      why: 'rewound onto a vote that already landed: never land it twice',
      planned: [5, 6, 7],
      nextIndex: 6,
      landed: [5, 6],
      decision: { kind: 'stale', firstIndex: 6, nextIndex: 6 },
    },
    {
      why: 'no votes planned',
      planned: [],
      nextIndex: 4,
      landed: [],
      decision: { kind: 'send', votes: [] },
    },
  ])('$why', ({ planned, nextIndex, landed, decision }) => {
    expect(reconcileVotes(votes(...planned), nextIndex, new Set(landed))).toEqual(decision);
  });

  it('returns the caller’s own vote objects', () => {
    const planned = [
      { index: 2, payload: 'a' },
      { index: 3, payload: 'b' },
    ];
    const decision = reconcileVotes(planned, 3, new Set([2]));
    expect(decision).toEqual({ kind: 'send', votes: [planned[1]] });
    expect(decision.kind === 'send' && decision.votes[0]).toBe(planned[1]);
  });
});
