import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BridgeView } from '../../src/chain/port/bridge-chains.js';
import type { DepositEntry, DepositResult, RejectionReason, WithdrawEntry } from '../../src/chain/types.js';
import { cleanupTurn } from '../../src/machines/planning/cleanup-turns.js';
import { planAckDeposits, planAckWithdraws, planCleanups } from '../../src/machines/planning/cycle-plan.js';
import { bridgeView, deposit, withdrawal } from '../../test/machines/support/bridge-view.js';
import { isRelayable, sameResult, sameTransfer } from '../invariants/state-checks.js';
import { checkProperty, propertyProfile } from '../support/profile.js';

/**
 * The vote planners on random views: a plan starts at the authority's own next_index, never
 * skips an index, never plans past the first entry that is not ready, and votes exactly as an
 * honest authority must (PROTOCOL.md "How an honest authority votes"). The oracle is written
 * from the protocol (../invariants/state-checks.ts), not taken from the planners.
 */

const RUNS = propertyProfile() === 'long' ? 20_000 : 500;
const REASONS: RejectionReason[] = ['InternalError', 'InsufficientFunds', 'LimitExceeded', 'TokenPairFrozen', 'TokenPairNotFound'];
// Few distinct values, so that proposals that match by accident and differ by one field both occur.
const RECIPIENTS = ['Recipient1'.padEnd(44, '1'), 'Recipient2'.padEnd(44, '1')];
const MINTS = ['MintA'.padEnd(43, '1'), 'MintB'.padEnd(43, '1')];

const result: fc.Arbitrary<DepositResult> = fc.oneof(
  fc.bigInt(1n, 1_200n).map((amount) => ({ kind: 'Confirmed' as const, amount })),
  fc.constantFrom(...REASONS).map((reason) => ({ kind: 'Rejected' as const, reason })),
);

const sourceEntry: fc.Arbitrary<DepositEntry> = fc
  .record({
    amount: fc.bigInt(1n, 1_000n),
    recipient: fc.constantFrom(...RECIPIENTS),
    sourceMint: fc.constantFrom(...MINTS),
    status: fc.constantFrom('Initialized' as const, 'Relaying' as const, 'Finalized' as const),
    cleanupCompleted: fc.boolean(),
    proposed: result,
  })
  .map(({ status, proposed, cleanupCompleted, ...transfer }) =>
    deposit(0, {
      ...transfer,
      status,
      proposed: status === 'Initialized' ? { kind: 'None' } : proposed,
      result: status === 'Finalized' ? proposed : { kind: 'None' },
      cleanupCompleted: status === 'Finalized' && cleanupCompleted,
    }),
  );

/** A destination entry for deposit `source`: usually its transfer, sometimes a lie; Voting, Finalized or (inconsistently) Empty. */
function destinationEntry(source: DepositEntry | undefined): fc.Arbitrary<WithdrawEntry> {
  const base = source ?? deposit(99);
  return fc
    .record({
      status: fc.constantFrom('Voting' as const, 'Finalized' as const, 'Finalized' as const, 'Empty' as const),
      truthful: fc.boolean(),
      amount: fc.bigInt(1n, 1_000n),
      recipient: fc.constantFrom(...RECIPIENTS),
      result,
      claimed: fc.boolean(),
    })
    .map(({ status, truthful, amount, recipient, result: finalResult, claimed }) => {
      const transfer = truthful ? {} : { amount, recipient };
      if (status !== 'Finalized') return withdrawal(base, { ...transfer, status, result: { kind: 'None' } });
      const createdTokenAccount = finalResult.kind === 'Rejected' ? 'NotRequired' : claimed ? 'Created' : 'Pending';
      return withdrawal(base, { ...transfer, status, result: finalResult, createdTokenAccount });
    });
}

const views: fc.Arbitrary<{ view: BridgeView; limit: number }> = fc
  .array(sourceEntry, { maxLength: 10 })
  .chain((deposits) =>
    fc.record({
      deposits: fc.constant(deposits),
      withdrawals: fc
        .integer({ min: 0, max: deposits.length + 2 })
        .chain((count) => fc.tuple(...Array.from({ length: count }, (_, i) => destinationEntry(deposits[i])))),
      sourceSettled: fc.nat(deposits.length),
      limit: fc.integer({ min: 1, max: 8 }),
      targetNext: fc.nat(),
      sourceNext: fc.nat(),
    }),
  )
  .map(({ deposits, withdrawals, sourceSettled, limit, targetNext, sourceNext }) => ({
    limit,
    // The program keeps next_index <= entry_count.
    view: bridgeView({
      deposits,
      withdrawals,
      sourceSettled,
      ownTargetNext: targetNext % (withdrawals.length + 1),
      ownSourceNext: sourceNext % (deposits.length + 1),
    }),
  }));

function entries<E>(window: { entries: ReadonlyMap<number, E> }): ReadonlyMap<number, E> {
  return window.entries;
}

function ownNext(header: BridgeView['deposits']['header']): number {
  return Number(header.votes[0]!.nextIndex);
}

describe('vote planning (pure properties)', () => {
  it('ack_deposit: consecutive votes from next_index, honest data, and no vote past the first entry that is not ready', async () => {
    await checkProperty(
      'planAckDeposits',
      fc.asyncProperty(views, async ({ view, limit }) => {
        const plan = planAckDeposits(view, limit);
        const source = entries(view.deposits);
        const target = entries(view.withdrawals);
        const first = ownNext(view.withdrawals.header);
        const sourceCount = Number(view.deposits.header.entryCount);
        const targetCount = Number(view.withdrawals.header.entryCount);
        expect(plan.votes.map((vote) => vote.index)).toEqual(plan.votes.map((_, i) => first + i));
        expect(plan.votes.length).toBeLessThanOrEqual(limit);
        for (const vote of plan.votes) {
          const deposit = source.get(vote.index)!;
          expect(vote.index).toBeLessThan(sourceCount);
          expect({ amount: BigInt(vote.amount), recipient: vote.recipient, sourceMint: vote.sourceMint }).toEqual({
            amount: deposit.amount,
            recipient: deposit.recipient,
            sourceMint: deposit.sourceMint,
          });
          const proposal = target.get(vote.index);
          if (vote.index >= targetCount) expect(vote.approve).toBe(true);
          else expect([proposal!.status !== 'Empty', vote.approve]).toEqual([true, sameTransfer(proposal!, deposit)]);
        }
        const end = first + plan.votes.length;
        // Stopping early is only allowed at an entry that cannot be voted on: a removed one.
        if (plan.votes.length < limit && end < sourceCount) expect(end < targetCount && target.get(end)!.status === 'Empty').toBe(true);
        expect(plan.pending).toBe(Math.max(0, sourceCount - first));
      }),
      RUNS,
    );
  });

  it('ack_withdraw: consecutive relays from next_index, only under rule 3.1, stopping at the first result that is not ready', async () => {
    await checkProperty(
      'planAckWithdraws',
      fc.asyncProperty(views, async ({ view, limit }) => {
        const plan = planAckWithdraws(view, limit);
        const source = entries(view.deposits);
        const target = entries(view.withdrawals);
        const first = ownNext(view.deposits.header);
        const end = Math.min(Number(view.deposits.header.entryCount), Number(view.withdrawals.header.entryCount));
        const ready = (index: number) => {
          const destination = target.get(index);
          const deposit = source.get(index)!;
          const result = destination?.result;
          return isRelayable(destination) && (result?.kind !== 'Confirmed' || result.amount <= deposit.amount);
        };
        expect(plan.votes.map((planned) => planned.vote.index)).toEqual(plan.votes.map((_, i) => first + i));
        expect(plan.votes.length).toBeLessThanOrEqual(limit);
        for (const { vote, destination } of plan.votes) {
          const deposit = source.get(vote.index)!;
          const truth = target.get(vote.index)!;
          expect(ready(vote.index)).toBe(true);
          expect(destination).toEqual({ status: truth.status, createdTokenAccount: truth.createdTokenAccount, result: { kind: truth.result.kind } });
          const relayed: DepositResult = vote.result.kind === 'Confirmed' ? { kind: 'Confirmed', amount: BigInt(vote.result.amount) } : vote.result;
          expect(sameResult(relayed, truth.result)).toBe(true);
          expect(vote.approve).toBe(deposit.status === 'Initialized' || sameResult(deposit.proposed, truth.result));
        }
        let readyRun = 0;
        while (first + readyRun < end && ready(first + readyRun)) readyRun += 1;
        expect(plan.pending).toBe(readyRun);
        expect(plan.votes.length).toBe(Math.min(limit, readyRun));
      }),
      RUNS,
    );
  });

  it('cleanup_deposit: exactly the Finalized entries not cleaned up, from settled_prefix, in order', async () => {
    await checkProperty(
      'planCleanups',
      fc.asyncProperty(views, async ({ view, limit }) => {
        const plan = planCleanups(view, limit);
        const settled = Number(view.deposits.header.settledPrefix);
        const candidates = [...entries(view.deposits)]
          .filter(([index, deposit]) => index >= settled && deposit.status === 'Finalized' && !deposit.cleanupCompleted)
          .map(([index]) => index);
        expect(plan.indices).toEqual(candidates.slice(0, limit));
        expect(plan.pending).toBe(candidates.length);
        expect(plan.waits).toEqual([]);
      }),
      RUNS,
    );
  });

  it('cleanup turns: each candidate is planned or left to the authority whose turn it is, never both; none is left past the grace', async () => {
    const turnsArbitrary = fc.record({ graceReads: fc.integer({ min: 1, max: 4 }), readsBefore: fc.integer({ min: -1, max: 5 }) });
    await checkProperty(
      'planCleanups with turns',
      fc.asyncProperty(views, turnsArbitrary, async ({ view, limit }, { graceReads, readsBefore }) => {
        const settled = Number(view.deposits.header.settledPrefix);
        const candidates = [...entries(view.deposits)].filter(
          ([index, deposit]) => index >= settled && deposit.status === 'Finalized' && !deposit.cleanupCompleted,
        );
        // readsBefore -1: never seen before; otherwise every candidate was seen at that many reads.
        const waits = readsBefore < 0 ? [] : candidates.map(([index]) => ({ index, reads: readsBefore }));
        const reads = readsBefore + 1;
        const plan = planCleanups(view, limit, { waits, graceReads });
        const { header } = view.deposits;
        const own = header.authorities.indexOf(view.authority);
        const carried = new Map(plan.waits.map((wait) => [wait.index, wait.reads]));
        const left: number[] = [];
        for (const [index, deposit] of candidates) {
          const turn = cleanupTurn(index, deposit, header.authorityCount);
          const voters = (deposit.yesVotes | deposit.noVotes) & ((1 << header.authorityCount) - 1);
          // The turn is a voter, and no voter sits between index mod n and it; with no voter, anyone's.
          if (turn === null) expect(voters).toBe(0);
          else {
            expect((voters >> turn) & 1).toBe(1);
            for (let slot = index % header.authorityCount; slot !== turn; slot = (slot + 1) % header.authorityCount)
              expect((voters >> slot) & 1).toBe(0);
          }
          const others = turn !== null && turn !== own;
          expect(carried.get(index)).toBe(others ? reads : undefined);
          if (others && reads < graceReads) left.push(index);
        }
        const planned = candidates.map(([index]) => index).filter((index) => !left.includes(index));
        expect(plan.indices).toEqual(planned.slice(0, limit));
        expect(plan.pending).toBe(planned.length);
      }),
      RUNS,
    );
  });
});
