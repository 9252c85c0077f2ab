import { describe, expect, it } from 'vitest';
import { encodeTrackerHeader } from '../../../src/chain/codec/accounts.js';
import { depositTrackerAddress } from '../../../src/chain/pda.js';
import { BridgeFixture, PROGRAM_ID, ProgramChain, expectProgramError, newKey, readonly, signer, writable } from './harness.js';

describe('deposit', () => {
  it('appends an Initialized entry with the signer as depositor and the current slot', () => {
    const fixture = new BridgeFixture();
    const data = fixture.transfer(250n, newKey().toBase58());
    fixture.source.slot = 4242n;
    fixture.deposit(data);
    expect(fixture.depositHeader().entryCount).toBe(1n);
    expect(fixture.depositEntry(0)).toEqual({
      ...data,
      depositor: fixture.depositor.toBase58(),
      status: 'Initialized',
      cleanupCompleted: false,
      yesVotes: 0,
      noVotes: 0,
      proposed: { kind: 'None' },
      result: { kind: 'None' },
      refundedAmount: 0n,
      depositSlot: 4242n,
    });
  });

  it('rejects amount 0 with InvalidAmount', () => {
    const fixture = new BridgeFixture();
    expectProgramError(fixture.source, 'InvalidAmount', () => fixture.deposit(fixture.transfer(0n, newKey().toBase58())));
  });

  it('rejects a deposit at capacity with TrackerFull', () => {
    const fixture = new BridgeFixture({ capacity: 2n });
    const mint = newKey().toBase58();
    fixture.deposit(fixture.transfer(1n, mint));
    fixture.deposit(fixture.transfer(1n, mint));
    const error = expectProgramError(fixture.source, 'TrackerFull', () => fixture.deposit(fixture.transfer(1n, mint)));
    expect(error.code).toBe(6007);
  });

  it('rejects wrong accounts: unsigned depositor, read-only tracker, missing tracker', () => {
    const fixture = new BridgeFixture();
    const ix = { name: 'deposit' as const, ...fixture.transfer(5n, newKey().toBase58()) };
    const depositor = fixture.depositor.toBase58();
    const cases = [
      [{ address: depositor, isSigner: false, isWritable: true }, writable(fixture.depositTracker)],
      [signer(fixture.depositor), readonly(fixture.depositTracker)],
      [signer(fixture.depositor)],
      [signer(fixture.depositor), writable(newKey())],
    ];
    for (const metas of cases) expectProgramError(fixture.source, 'InvalidAccount', () => fixture.source.run(ix, metas));
  });

  it('accepts a tracker only at the PDA of its own stored chain id, owned by the program, on its own chain', () => {
    const fixture = new BridgeFixture();
    const ix = { name: 'deposit' as const, ...fixture.transfer(5n, newKey().toBase58()) };
    const metas = [signer(fixture.depositor), writable(fixture.depositTracker)];
    const account = fixture.source.accounts.get(fixture.depositTracker.toBase58())!;

    // Same bytes on another chain: the tracker stores source chain 1.
    const otherChain = new ProgramChain(7);
    otherChain.accounts.set(fixture.depositTracker.toBase58(), { ...account, data: account.data.slice() });
    expectProgramError(otherChain, 'InvalidAccount', () => otherChain.run(ix, metas));

    // A header that stores another target chain than its PDA was built from.
    const forged = new ProgramChain(fixture.source.chainId);
    const data = account.data.slice();
    data.set(encodeTrackerHeader({ ...fixture.depositHeader(), targetChainId: 9 }));
    forged.accounts.set(fixture.depositTracker.toBase58(), { ...account, data });
    expectProgramError(forged, 'InvalidAccount', () => forged.run(ix, metas));
    expect(depositTrackerAddress(PROGRAM_ID, 9).equals(fixture.depositTracker)).toBe(false);

    // Right bytes, wrong owner; then right owner, wrong discriminator.
    const foreign = new ProgramChain(fixture.source.chainId);
    foreign.accounts.set(fixture.depositTracker.toBase58(), { ...account, owner: newKey().toBase58(), data: account.data.slice() });
    expectProgramError(foreign, 'InvalidAccount', () => foreign.run(ix, metas));
    const wrongKind = new ProgramChain(fixture.source.chainId);
    const renamed = account.data.slice();
    renamed[0]! ^= 0xff;
    wrongKind.accounts.set(fixture.depositTracker.toBase58(), { ...account, data: renamed });
    expectProgramError(wrongKind, 'InvalidAccount', () => wrongKind.run(ix, metas));
  });
});

describe('withdraw', () => {
  it('moves a Confirmed + Pending entry to Created with the given token account; anyone may sign', () => {
    const fixture = new BridgeFixture();
    const mint = fixture.normalMint();
    const index = fixture.depositAndFinalize(fixture.transfer(10n, mint));
    const tokenAccount = newKey();
    fixture.withdraw(index, tokenAccount);
    expect(fixture.withdrawEntry(0)).toMatchObject({ createdTokenAccount: 'Created', tokenAccount: tokenAccount.toBase58() });
  });

  it('reports NotWithdrawable for an index at or past entry_count, a Voting entry, a Rejected entry and a second claim', () => {
    const fixture = new BridgeFixture();
    const mint = fixture.normalMint();
    expectProgramError(fixture.target, 'NotWithdrawable', () => fixture.withdraw(0n));

    const claimed = fixture.depositAndFinalize(fixture.transfer(10n, mint));
    fixture.withdraw(claimed);
    expectProgramError(fixture.target, 'NotWithdrawable', () => fixture.withdraw(claimed));

    const unknownMint = newKey().toBase58();
    const rejected = fixture.depositAndFinalize(fixture.transfer(10n, unknownMint));
    expect(fixture.withdrawEntry(Number(rejected)).result).toEqual({ kind: 'Rejected', reason: 'TokenPairNotFound' });
    expectProgramError(fixture.target, 'NotWithdrawable', () => fixture.withdraw(rejected));

    const data = fixture.transfer(10n, mint);
    fixture.deposit(data);
    fixture.ackDeposit(0, 2n, true, data);
    expect(fixture.withdrawEntry(2).status).toBe('Voting');
    const error = expectProgramError(fixture.target, 'NotWithdrawable', () => fixture.withdraw(2n));
    expect(error.code).toBe(6012);
  });

  it('requires a signer and a writable tracker', () => {
    const fixture = new BridgeFixture();
    const who = newKey();
    const ix = { name: 'withdraw' as const, index: 0n };
    expectProgramError(fixture.target, 'InvalidAccount', () =>
      fixture.target.run(ix, [{ ...signer(who), isSigner: false }, writable(fixture.withdrawTracker), readonly(newKey())]),
    );
    expectProgramError(fixture.target, 'InvalidAccount', () =>
      fixture.target.run(ix, [signer(who), readonly(fixture.withdrawTracker), readonly(newKey())]),
    );
  });
});
