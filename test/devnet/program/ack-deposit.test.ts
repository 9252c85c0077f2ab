import { describe, expect, it } from 'vitest';
import { BridgeFixture, expectProgramError, newKey, readonly, signer, writable, type TransferData } from './harness.js';

const YES_0 = 0b001;

describe('ack_deposit: proposals and votes', () => {
  it("a proposal at entry_count creates a Voting entry carrying the proposer's yes vote", () => {
    const fixture = new BridgeFixture();
    const data = fixture.transfer(40n, fixture.normalMint());
    fixture.ackDeposit(0, 0n, true, data);
    expect(fixture.withdrawEntry(0)).toMatchObject({
      status: 'Voting',
      createdTokenAccount: 'Pending',
      yesVotes: YES_0,
      noVotes: 0,
      ...data,
      result: { kind: 'None' },
    });
    const header = fixture.withdrawHeader();
    expect(header.entryCount).toBe(1n);
    expect(header.votes[0]).toEqual({ nextIndex: 1n, lastVote: 'Yes' });
    expect(header.votes[1]).toEqual({ nextIndex: 0n, lastVote: 'None' });
  });

  it('a no vote ignores its data arguments and records last_vote No', () => {
    const fixture = new BridgeFixture({ authorities: 4, threshold: 2 });
    const data = fixture.transfer(40n, fixture.normalMint());
    fixture.ackDeposit(0, 0n, true, data);
    fixture.ackDeposit(1, 0n, false, { amount: 1n, recipient: newKey().toBase58(), sourceMint: newKey().toBase58() });
    expect(fixture.withdrawEntry(0)).toMatchObject({ status: 'Voting', yesVotes: 0b01, noVotes: 0b10, ...data });
    expect(fixture.withdrawHeader().votes[1]).toEqual({ nextIndex: 1n, lastVote: 'No' });
  });

  it('the token pair account may be anything on a no vote, but must be the source_mint PDA on a yes vote', () => {
    const fixture = new BridgeFixture({ authorities: 4, threshold: 2 });
    const data = fixture.transfer(40n, fixture.normalMint());
    fixture.ackDeposit(0, 0n, true, data);
    const vote = (approve: boolean) => ({ name: 'ack_deposit' as const, index: 0n, approve, ...data });
    const metas = (authority: number) => [signer(fixture.authorities[authority]!), writable(fixture.withdrawTracker), readonly(newKey())];
    expectProgramError(fixture.target, 'InvalidAccount', () => fixture.target.run(vote(true), metas(1)));
    fixture.target.run(vote(false), metas(1));
    expect(fixture.withdrawEntry(0).noVotes).toBe(0b10);
    expectProgramError(fixture.target, 'InvalidAccount', () =>
      fixture.target.run(vote(false), [signer(fixture.authorities[2]!), writable(fixture.withdrawTracker)]),
    );
  });

  it('rejects wrong accounts: authority did not sign, tracker read-only', () => {
    const fixture = new BridgeFixture();
    const data = fixture.transfer(40n, fixture.normalMint());
    const ix = { name: 'ack_deposit' as const, index: 0n, approve: true, ...data };
    const pair = readonly(fixture.tokenPairAddress(data.sourceMint));
    const authority = fixture.authorities[0]!;
    expectProgramError(fixture.target, 'InvalidAccount', () =>
      fixture.target.run(ix, [{ ...signer(authority), isSigner: false }, writable(fixture.withdrawTracker), pair]),
    );
    expectProgramError(fixture.target, 'InvalidAccount', () => fixture.target.run(ix, [signer(authority), readonly(fixture.withdrawTracker), pair]));
  });

  it('reports NotAnAuthority, VoteOutOfOrder, InvalidVote, TrackerFull and VoteMismatch', () => {
    const fixture = new BridgeFixture({ capacity: 1n, authorities: 3, threshold: 3 });
    const data = fixture.transfer(40n, fixture.normalMint());
    // Created up front: set_token_pair would remove the pending entry.
    const otherMint = fixture.normalMint();
    const outsider = newKey();
    const error = expectProgramError(fixture.target, 'NotAnAuthority', () =>
      fixture.target.run({ name: 'ack_deposit', index: 0n, approve: true, ...data }, [
        signer(outsider),
        writable(fixture.withdrawTracker),
        readonly(fixture.tokenPairAddress(data.sourceMint)),
      ]),
    );
    expect(error.code).toBe(6000);
    expect(expectProgramError(fixture.target, 'VoteOutOfOrder', () => fixture.ackDeposit(0, 1n, true, data)).code).toBe(6001);
    expect(expectProgramError(fixture.target, 'InvalidVote', () => fixture.ackDeposit(0, 0n, false, data)).code).toBe(6003);
    fixture.ackDeposit(0, 0n, true, data);
    expect(expectProgramError(fixture.target, 'VoteOutOfOrder', () => fixture.ackDeposit(0, 0n, true, data)).code).toBe(6001);
    for (const changed of [{ amount: 41n }, { recipient: newKey().toBase58() }, { sourceMint: otherMint }]) {
      const mismatch = expectProgramError(fixture.target, 'VoteMismatch', () => fixture.ackDeposit(1, 0n, true, { ...data, ...changed }));
      expect(mismatch.code).toBe(6002);
    }
    // Capacity 1 is used by entry 0: authority 0's next proposal finds the tracker full.
    expect(expectProgramError(fixture.target, 'TrackerFull', () => fixture.ackDeposit(0, 1n, true, data)).code).toBe(6007);
  });

  it('checks in order: accounts, NotAnAuthority, VoteOutOfOrder, InvalidVote before TrackerFull', () => {
    const fixture = new BridgeFixture({ capacity: 1n });
    const data = fixture.transfer(40n, fixture.normalMint());
    const outsider = newKey();
    // An outsider with a wrong token pair account: accounts come first.
    expectProgramError(fixture.target, 'InvalidAccount', () =>
      fixture.target.run({ name: 'ack_deposit', index: 5n, approve: true, ...data }, [
        signer(outsider),
        writable(fixture.withdrawTracker),
        readonly(newKey()),
      ]),
    );
    expectProgramError(fixture.target, 'NotAnAuthority', () =>
      fixture.target.run({ name: 'ack_deposit', index: 5n, approve: false, ...data }, [
        signer(outsider),
        writable(fixture.withdrawTracker),
        readonly(newKey()),
      ]),
    );
    expectProgramError(fixture.target, 'VoteOutOfOrder', () => fixture.ackDeposit(0, 1n, false, data));
    fixture.ackDeposit(0, 0n, true, data);
    fixture.ackDeposit(1, 0n, true, data);
    // Tracker full: a no-vote proposal is InvalidVote, a yes proposal TrackerFull.
    expectProgramError(fixture.target, 'InvalidVote', () => fixture.ackDeposit(0, 1n, false, data));
    expectProgramError(fixture.target, 'TrackerFull', () => fixture.ackDeposit(0, 1n, true, data));
  });
});

describe('ack_deposit: finalization and its result from the TokenPair', () => {
  function finalizeWith(pair: Parameters<BridgeFixture['setTokenPair']>[1] | 'none', amount: bigint) {
    const fixture = new BridgeFixture();
    const mint = newKey().toBase58();
    if (pair !== 'none') fixture.setTokenPair(mint, pair);
    fixture.target.slot = 777n;
    fixture.depositAndFinalize(fixture.transfer(amount, mint));
    return { fixture, mint, entry: fixture.withdrawEntry(0) };
  }

  it('threshold yes on the next unsettled entry finalizes it: Confirmed(amount), limit and vault drop', () => {
    const { fixture, mint, entry } = finalizeWith({ limitRemaining: 1_000n, vaultBalance: 2_000n }, 300n);
    expect(entry).toMatchObject({
      status: 'Finalized',
      result: { kind: 'Confirmed', amount: 300n },
      createdTokenAccount: 'Pending',
      finalizedSlot: 777n,
      yesVotes: 0b011,
    });
    expect(fixture.tokenPair(mint)).toMatchObject({ limitRemaining: 700n, vaultBalance: 1_700n });
    expect(fixture.withdrawHeader().settledPrefix).toBe(1n);
  });

  it('confirms partially when the limit is below the amount', () => {
    const { fixture, mint, entry } = finalizeWith({ limitRemaining: 120n, vaultBalance: 2_000n }, 300n);
    expect(entry.result).toEqual({ kind: 'Confirmed', amount: 120n });
    expect(fixture.tokenPair(mint)).toMatchObject({ limitRemaining: 0n, vaultBalance: 1_880n });
  });

  it.each([
    ['no TokenPair', 'none' as const, 'TokenPairNotFound'],
    ['frozen (even with limit 0 and an empty vault)', { frozen: true, limitRemaining: 0n, vaultBalance: 0n }, 'TokenPairFrozen'],
    ['limit_remaining 0 (even with an empty vault)', { limitRemaining: 0n, vaultBalance: 0n }, 'LimitExceeded'],
    ['vault below min(amount, limit)', { limitRemaining: 500n, vaultBalance: 299n }, 'InsufficientFunds'],
  ])('rejects when %s, with created_token_account NotRequired', (_, pair, reason) => {
    const { fixture, mint, entry } = finalizeWith(pair, 300n);
    expect(entry).toMatchObject({ status: 'Finalized', result: { kind: 'Rejected', reason }, createdTokenAccount: 'NotRequired' });
    if (pair !== 'none') expect(fixture.tokenPair(mint)).toMatchObject({ limitRemaining: pair.limitRemaining, vaultBalance: pair.vaultBalance });
  });

  it('confirms when the vault equals min(amount, limit)', () => {
    const { entry } = finalizeWith({ limitRemaining: 500n, vaultBalance: 300n }, 300n);
    expect(entry.result).toEqual({ kind: 'Confirmed', amount: 300n });
  });

  it('finalizes in order: a later entry with threshold yes waits, then cascades in the same instruction', () => {
    const fixture = new BridgeFixture({ authorities: 3, threshold: 2 });
    const mints = [fixture.normalMint(), fixture.normalMint(), fixture.normalMint(), fixture.normalMint()];
    fixture.setTokenPair(mints[2]!, { frozen: true });
    const data = mints.map((mint, i) => fixture.transfer(BigInt(10 + i), mint));
    for (const [i, d] of data.entries()) fixture.ackDeposit(0, BigInt(i), true, d);
    // Authority 2 votes yes on entries 0..3 except it votes no on entry 0 (0 then lacks threshold).
    fixture.ackDeposit(2, 0n, false, data[0]!);
    fixture.ackDeposit(2, 1n, true, data[1]!);
    fixture.ackDeposit(2, 2n, true, data[2]!);
    expect(fixture.withdrawEntry(1).status).toBe('Voting');
    expect(fixture.withdrawEntry(2).status).toBe('Voting');
    expect(fixture.withdrawHeader().settledPrefix).toBe(0n);
    fixture.ackDeposit(1, 0n, true, data[0]!);
    // Entries 0, 1, 2 finalize; 3 has one yes and stays Voting. Entry 2 uses its own (frozen) pair.
    expect([0, 1, 2, 3].map((i) => fixture.withdrawEntry(i).status)).toEqual(['Finalized', 'Finalized', 'Finalized', 'Voting']);
    expect(fixture.withdrawEntry(1).result).toEqual({ kind: 'Confirmed', amount: 11n });
    expect(fixture.withdrawEntry(2).result).toEqual({ kind: 'Rejected', reason: 'TokenPairFrozen' });
    expect(fixture.withdrawHeader().settledPrefix).toBe(3n);
  });

  it('a late vote on a Finalized entry only sets its bit', () => {
    const fixture = new BridgeFixture();
    const mint = fixture.normalMint();
    const data = fixture.transfer(10n, mint);
    fixture.depositAndFinalize(data);
    const pairBefore = fixture.tokenPair(mint);
    const before = fixture.withdrawEntry(0);
    fixture.ackDeposit(2, 0n, false, data);
    expect(fixture.withdrawEntry(0)).toEqual({ ...before, noVotes: 0b100 });
    expect(fixture.tokenPair(mint)).toEqual(pairBefore);
    expect(fixture.withdrawHeader()).toMatchObject({ entryCount: 1n, settledPrefix: 1n });
    expect(fixture.withdrawHeader().votes[2]).toEqual({ nextIndex: 1n, lastVote: 'No' });
  });

  it('a late yes vote must still match the proposal', () => {
    const fixture = new BridgeFixture();
    const data = fixture.transfer(10n, fixture.normalMint());
    fixture.depositAndFinalize(data);
    expectProgramError(fixture.target, 'VoteMismatch', () => fixture.ackDeposit(2, 0n, true, { ...data, amount: 11n }));
    fixture.ackDeposit(2, 0n, true, data);
    expect(fixture.withdrawEntry(0).yesVotes).toBe(0b111);
  });
});

describe('ack_deposit: threshold no', () => {
  it('removes entry i and every later entry, sets entry_count = i and rewinds next_index, keeping last_vote', () => {
    const fixture = new BridgeFixture({ authorities: 3, threshold: 2 });
    const mint = fixture.normalMint();
    const data: TransferData[] = [10n, 11n, 12n, 13n].map((amount) => fixture.transfer(amount, mint));
    fixture.depositAndFinalize(data[0]!);
    for (const i of [1, 2, 3]) fixture.ackDeposit(0, BigInt(i), true, data[i]!);
    fixture.ackDeposit(1, 1n, false, data[1]!);
    fixture.ackDeposit(2, 0n, true, data[0]!);
    // Authority 2 votes no on 1: two no votes > 3 - 2.
    fixture.ackDeposit(2, 1n, false, data[1]!);
    const header = fixture.withdrawHeader();
    expect(header.entryCount).toBe(1n);
    expect(header.settledPrefix).toBe(1n);
    expect(header.votes).toEqual([
      { nextIndex: 1n, lastVote: 'Yes' },
      { nextIndex: 1n, lastVote: 'No' },
      { nextIndex: 1n, lastVote: 'No' },
    ]);
    for (const i of [1, 2, 3]) expect(fixture.withdrawEntryBytes(i).every((byte) => byte === 0)).toBe(true);
    expect(fixture.withdrawEntry(0).status).toBe('Finalized');
    // The next proposal reuses index 1.
    fixture.ackDeposit(0, 1n, true, data[2]!);
    expect(fixture.withdrawEntry(1)).toMatchObject({ status: 'Voting', amount: 12n });
  });

  it('does not resolve before the no votes exceed count - threshold', () => {
    const fixture = new BridgeFixture({ authorities: 5, threshold: 3 });
    const data = fixture.transfer(10n, fixture.normalMint());
    fixture.ackDeposit(0, 0n, true, data);
    fixture.ackDeposit(1, 0n, false, data);
    fixture.ackDeposit(2, 0n, false, data);
    expect(fixture.withdrawHeader().entryCount).toBe(1n);
    fixture.ackDeposit(3, 0n, false, data);
    expect(fixture.withdrawHeader().entryCount).toBe(0n);
  });
});
