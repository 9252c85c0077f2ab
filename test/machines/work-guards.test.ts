import { describe, expect, it } from 'vitest';
import { transition } from 'xstate';
import type { CreatedTokenAccount, DepositResult, WithdrawStatus } from '../../src/chain/types.js';
import { crankSettings, initialCrankContext } from '../../src/machines/crank-context.js';
import { crankMachine } from '../../src/machines/crank-machine.js';
import type { CrankStep } from '../../src/machines/crank-types.js';
import { isRelayableWithdrawResult, planCycle, type CyclePlan } from '../../src/machines/planning/cycle-plan.js';
import { bridgeView, CONFIRMED_FULL, deposit, finalizedWithdrawal } from './support/bridge-view.js';
import { TEST_CRANK_SETTINGS } from './support/test-crank.js';

const EMPTY_PLAN: CyclePlan = {
  ackDeposit: { votes: [], pending: 0 },
  ackWithdraw: { votes: [], pending: 0 },
  cleanup: { indices: [], pending: 0, waits: [] },
};

describe('isRelayableWithdrawResult (rule 3.1)', () => {
  it.each<[WithdrawStatus, DepositResult['kind'], CreatedTokenAccount, boolean]>([
    ['Finalized', 'Rejected', 'NotRequired', true],
    ['Finalized', 'Confirmed', 'Created', true],
    ['Finalized', 'Confirmed', 'NotRequired', true],
    ['Finalized', 'Confirmed', 'Pending', false],
    ['Finalized', 'None', 'NotRequired', false],
    ['Voting', 'Rejected', 'NotRequired', false],
    ['Voting', 'Confirmed', 'Created', false],
    ['Empty', 'None', 'Pending', false],
  ])('%s %s with token account %s -> %s', (status, kind, createdTokenAccount, relayable) => {
    expect(isRelayableWithdrawResult({ status, createdTokenAccount, result: { kind } })).toBe(relayable);
  });
});

const STEPS: CrankStep[] = ['ack_deposit', 'ack_withdraw', 'cleanup'];

/**
 * Whether the machine's work guard of `step` sees work in `plan`: from the step's `checking`
 * state (an active crank that can pay its fees), any event re-runs its guards, and work leads
 * to the step's `submitting` state (xstate's pure transition(): nothing is submitted).
 */
function submits(step: CrankStep, plan: CyclePlan | null): boolean {
  const context = { ...initialCrankContext(crankSettings(TEST_CRANK_SETTINGS)), plan };
  const [snapshot] = transition(crankMachine, crankMachine.resolveState({ value: { [step]: 'checking' }, context }), { type: 'POLL' });
  return JSON.stringify(snapshot.value) === JSON.stringify({ [step]: 'submitting' });
}

describe("the machine's work guards", () => {
  const source = [deposit(0, { status: 'Finalized', result: { kind: 'Rejected', reason: 'InternalError' } }), deposit(1), deposit(2)];
  const busy = planCycle(
    bridgeView({
      deposits: source,
      withdrawals: [
        finalizedWithdrawal(source[0]!, { kind: 'Rejected', reason: 'InternalError' }),
        finalizedWithdrawal(source[1]!, CONFIRMED_FULL(source[1]!)),
      ],
      ownSourceNext: 1,
      ownTargetNext: 2,
    }),
  );

  it('see work in a plan that has it', () => {
    expect(STEPS.map((step) => submits(step, busy))).toEqual([true, true, true]);
  });

  it('see none in an empty plan or before any plan', () => {
    for (const plan of [EMPTY_PLAN, null]) {
      expect(STEPS.map((step) => submits(step, plan))).toEqual([false, false, false]);
    }
  });

  it('hasAckWithdrawWork refuses a plan holding any vote for a result rule 3.1 does not allow', () => {
    expect(submits('ack_withdraw', { ...EMPTY_PLAN, ackWithdraw: busy.ackWithdraw })).toBe(true);
    const [ready] = busy.ackWithdraw.votes;
    const unready = { ...ready!, destination: { ...ready!.destination, createdTokenAccount: 'Pending' as const } };
    expect(submits('ack_withdraw', { ...EMPTY_PLAN, ackWithdraw: { votes: [ready!, unready], pending: 2 } })).toBe(false);
  });
});
