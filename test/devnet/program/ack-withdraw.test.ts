import { describe, expect, it } from 'vitest';
import { encodeInstructionData } from '../../../src/chain/codec/instructions.js';
import { BridgeFixture, confirmed, expectProgramError, newKey, readonly, rejected, signer, writable } from './harness.js';

function withDeposits(count: number, options: ConstructorParameters<typeof BridgeFixture>[0] = {}) {
  const fixture = new BridgeFixture(options);
  const mint = newKey().toBase58();
  for (let i = 0; i < count; i += 1) fixture.deposit(fixture.transfer(100n + BigInt(i), mint));
  return fixture;
}

describe('ack_withdraw: proposals, votes and finalization', () => {
  it('the first vote on an Initialized entry proposes: Relaying with proposed = result', () => {
    const fixture = withDeposits(1);
    fixture.ackWithdraw(0, 0n, true, confirmed(60n));
    expect(fixture.depositEntry(0)).toMatchObject({
      status: 'Relaying',
      proposed: { kind: 'Confirmed', amount: 60n },
      result: { kind: 'None' },
      yesVotes: 0b001,
    });
    expect(fixture.depositHeader().votes[0]).toEqual({ nextIndex: 1n, lastVote: 'Yes' });
  });

  it('threshold yes finalizes with result = proposed, in any order', () => {
    const fixture = withDeposits(2);
    fixture.ackWithdraw(0, 0n, true, rejected(3));
    fixture.ackWithdraw(0, 1n, true, confirmed(101n));
    fixture.ackWithdraw(1, 0n, false, rejected(3));
    fixture.ackWithdraw(1, 1n, true, confirmed(101n));
    expect(fixture.depositEntry(1)).toMatchObject({ status: 'Finalized', result: { kind: 'Confirmed', amount: 101n } });
    expect(fixture.depositEntry(0).status).toBe('Relaying');
    fixture.ackWithdraw(2, 0n, true, rejected(3));
    expect(fixture.depositEntry(0)).toMatchObject({ status: 'Finalized', result: { kind: 'Rejected', reason: 'TokenPairFrozen' } });
  });

  it('a no vote only validates its result; a late vote only sets its bit', () => {
    const fixture = withDeposits(1);
    fixture.ackWithdraw(0, 0n, true, confirmed(50n));
    fixture.ackWithdraw(1, 0n, false, rejected(1));
    expect(fixture.depositEntry(0)).toMatchObject({ status: 'Relaying', proposed: { kind: 'Confirmed', amount: 50n }, noVotes: 0b010 });
    fixture.ackWithdraw(2, 0n, true, confirmed(50n));
    const finalized = fixture.depositEntry(0);
    expect(finalized).toMatchObject({ status: 'Finalized', result: { kind: 'Confirmed', amount: 50n } });
    // Authority 1 already voted; a fresh fixture position for a late vote comes from a 4th authority.
    const late = withDeposits(1, { authorities: 4, threshold: 2 });
    late.ackWithdraw(0, 0n, true, rejected(4));
    late.ackWithdraw(1, 0n, true, rejected(4));
    const before = late.depositEntry(0);
    late.ackWithdraw(2, 0n, false, confirmed(3n));
    expect(late.depositEntry(0)).toEqual({ ...before, noVotes: 0b0100 });
    expectProgramError(late.source, 'VoteMismatch', () => late.ackWithdraw(3, 0n, true, rejected(3)));
  });

  it('threshold no resets entry i and later non-finalized entries, keeps deposit data, rewinds positions', () => {
    const fixture = withDeposits(4);
    const before = [0, 1, 2, 3].map((i) => fixture.depositEntry(i));
    for (const i of [0n, 1n, 2n, 3n]) fixture.ackWithdraw(0, i, true, confirmed(100n + i));
    // Entry 2 finalizes (authorities 0 and 1), entries 1 and 3 stay Relaying.
    fixture.ackWithdraw(1, 0n, true, confirmed(100n));
    fixture.ackWithdraw(1, 1n, false, confirmed(101n));
    fixture.ackWithdraw(1, 2n, true, confirmed(102n));
    fixture.ackWithdraw(2, 0n, false, confirmed(100n)); // late vote on finalized entry 0
    expect(fixture.depositEntry(0).status).toBe('Finalized');
    fixture.ackWithdraw(2, 1n, false, confirmed(101n)); // two no votes on entry 1: threshold no
    expect([0, 1, 2, 3].map((i) => fixture.depositEntry(i).status)).toEqual(['Finalized', 'Initialized', 'Finalized', 'Initialized']);
    for (const i of [1, 3]) {
      expect(fixture.depositEntry(i)).toEqual({ ...before[i], status: 'Initialized', yesVotes: 0, noVotes: 0, proposed: { kind: 'None' } });
    }
    expect(fixture.depositEntry(2).yesVotes).toBe(0b011);
    expect(fixture.depositHeader().votes).toEqual([
      { nextIndex: 1n, lastVote: 'Yes' },
      { nextIndex: 1n, lastVote: 'Yes' },
      { nextIndex: 1n, lastVote: 'No' },
    ]);
    // Voting resumes at 1 with a fresh proposal; a late vote on finalized entry 2 follows.
    fixture.ackWithdraw(0, 1n, true, rejected(2));
    expect(fixture.depositEntry(1)).toMatchObject({ status: 'Relaying', proposed: { kind: 'Rejected', reason: 'LimitExceeded' } });
  });
});

describe('ack_withdraw: errors', () => {
  it('reports NotAnAuthority, VoteOutOfOrder, EntryNotFound, InvalidVote and VoteMismatch', () => {
    const fixture = withDeposits(1);
    const outsider = newKey();
    expectProgramError(fixture.source, 'NotAnAuthority', () =>
      fixture.source.run({ name: 'ack_withdraw', index: 0n, approve: true, result: confirmed(1n) }, [
        signer(outsider),
        writable(fixture.depositTracker),
      ]),
    );
    expectProgramError(fixture.source, 'VoteOutOfOrder', () => fixture.ackWithdraw(0, 1n, true, confirmed(1n)));
    expect(expectProgramError(fixture.source, 'InvalidVote', () => fixture.ackWithdraw(0, 0n, false, confirmed(1n))).code).toBe(6003);
    fixture.ackWithdraw(0, 0n, true, confirmed(1n));
    expect(expectProgramError(fixture.source, 'EntryNotFound', () => fixture.ackWithdraw(0, 1n, true, confirmed(1n))).code).toBe(6004);
    expect(expectProgramError(fixture.source, 'VoteMismatch', () => fixture.ackWithdraw(1, 0n, true, confirmed(2n))).code).toBe(6002);
    expectProgramError(fixture.source, 'VoteMismatch', () => fixture.ackWithdraw(1, 0n, true, rejected(1)));
  });

  it('reports InvalidResult for every invalid result, on yes and no votes', () => {
    const fixture = withDeposits(1);
    fixture.ackWithdraw(0, 0n, true, confirmed(10n));
    const invalid = [
      { tag: 0, reason: 0, amount: 0n },
      { tag: 3, reason: 0, amount: 0n },
      { tag: 1, reason: 1, amount: 5n },
      { tag: 2, reason: 5, amount: 0n },
      { tag: 2, reason: 1, amount: 1n },
      confirmed(101n),
    ];
    for (const result of invalid) {
      for (const approve of [true, false]) {
        expect(expectProgramError(fixture.source, 'InvalidResult', () => fixture.ackWithdraw(1, 0n, approve, result)).code).toBe(6009);
      }
    }
  });

  it('ignores the reserved bytes of a DepositResult argument', () => {
    const fixture = withDeposits(1);
    const data = encodeInstructionData({ name: 'ack_withdraw', index: 0n, approve: true, result: confirmed(10n) });
    data.fill(0xee, 8 + 8 + 1 + 2, 8 + 8 + 1 + 8);
    fixture.source.run(data, [signer(fixture.authorities[0]!), writable(fixture.depositTracker)]);
    expect(fixture.depositEntry(0).proposed).toEqual({ kind: 'Confirmed', amount: 10n });
  });

  it('checks in order: NotAnAuthority, VoteOutOfOrder, EntryNotFound, InvalidResult, InvalidVote', () => {
    const fixture = withDeposits(1);
    const bad = { tag: 0, reason: 0, amount: 0n };
    expectProgramError(fixture.source, 'NotAnAuthority', () =>
      fixture.source.run({ name: 'ack_withdraw', index: 3n, approve: false, result: bad }, [signer(newKey()), writable(fixture.depositTracker)]),
    );
    expectProgramError(fixture.source, 'VoteOutOfOrder', () => fixture.ackWithdraw(0, 3n, false, bad));
    expectProgramError(fixture.source, 'InvalidResult', () => fixture.ackWithdraw(0, 0n, false, bad));
    fixture.ackWithdraw(0, 0n, true, confirmed(1n));
    expectProgramError(fixture.source, 'EntryNotFound', () => fixture.ackWithdraw(0, 1n, false, bad));
  });

  it('rejects an unsigned authority and a read-only tracker with InvalidAccount', () => {
    const fixture = withDeposits(1);
    const ix = { name: 'ack_withdraw' as const, index: 0n, approve: true, result: confirmed(1n) };
    const authority = fixture.authorities[0]!;
    expectProgramError(fixture.source, 'InvalidAccount', () =>
      fixture.source.run(ix, [{ ...signer(authority), isSigner: false }, writable(fixture.depositTracker)]),
    );
    expectProgramError(fixture.source, 'InvalidAccount', () => fixture.source.run(ix, [signer(authority), readonly(fixture.depositTracker)]));
  });
});
