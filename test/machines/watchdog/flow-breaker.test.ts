import { describe, expect, it } from 'vitest';
import type { AckDepositVote } from '../../../src/chain/port/bridge-chains.js';
import { limitFlow, type FlowLimit, type FlowVote } from '../../../src/machines/watchdog/flow-breaker.js';
import type { CyclePlan } from '../../../src/machines/planning/cycle-plan.js';

/** The flow breaker, pure: the queue cut at the first yes vote past the limit, never a skip. */

const MINT = 'MintA'.padEnd(43, '1');
const OTHER = 'MintB'.padEnd(43, '1');
const HOUR = 3_600_000;
const LIMITS = new Map<string, FlowLimit>([[MINT, { mint: MINT, amount: 100n, windowMs: HOUR }]]);

function vote(index: number, amount: number, approve = true, sourceMint = MINT): AckDepositVote {
  return { index, approve, amount: String(amount), recipient: 'R'.padEnd(44, '1'), sourceMint };
}

function plan(votes: AckDepositVote[]): CyclePlan {
  return {
    ackDeposit: { votes, pending: votes.length + 3 },
    ackWithdraw: { votes: [], pending: 0 },
    cleanup: { indices: [], pending: 0, waits: [] },
  };
}

describe('limitFlow', () => {
  it('cuts the queue at the first yes vote past the limit: later votes wait, no votes and other mints included', () => {
    const votes = new Map<number, FlowVote>();
    const { plan: limited, held } = limitFlow(
      plan([vote(0, 60), vote(1, 10, false), vote(2, 50), vote(3, 1, true, OTHER)]),
      LIMITS,
      votes,
      new Set(),
      0,
    );
    expect(limited.ackDeposit).toEqual({ votes: [vote(0, 60), vote(1, 10, false)], pending: 2 });
    expect(held).toEqual({ id: `flow:2:${MINT}:50`, index: 2, mint: MINT, amount: '50', carried: '60', limit: '100', window_hours: 1 });
    expect([...votes.keys()]).toEqual([0]);
  });

  it('counts a re-planned vote once, lets a released transfer through, and frees the window as it slides', () => {
    const votes = new Map<number, FlowVote>();
    limitFlow(plan([vote(0, 60)]), LIMITS, votes, new Set(), 0);
    expect(limitFlow(plan([vote(0, 60), vote(1, 40)]), LIMITS, votes, new Set(), 1).held).toBeNull();
    expect(limitFlow(plan([vote(2, 1)]), LIMITS, votes, new Set(), 2).held?.id).toBe(`flow:2:${MINT}:1`);
    expect(limitFlow(plan([vote(2, 1)]), LIMITS, votes, new Set([`flow:2:${MINT}:1`]), 3).held).toBeNull();
    expect(limitFlow(plan([vote(3, 100)]), LIMITS, votes, new Set(), 4).held).not.toBeNull();
    expect(limitFlow(plan([vote(3, 100)]), LIMITS, votes, new Set(), HOUR + 10).held).toBeNull();
  });

  it('leaves the plan alone without limits', () => {
    const original = plan([vote(0, 1_000_000)]);
    expect(limitFlow(original, new Map(), new Map(), new Set(), 0)).toEqual({ plan: original, held: null });
  });
});
