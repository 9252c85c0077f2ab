import { describe, expect, it } from 'vitest';
import { BridgeFixture, confirmed, expectProgramError, newKey, readonly, rejected, signer, writable } from './harness.js';

/** Deposits `amounts` and finalizes each on the source with the given results (authorities 0 and 1). */
function finalizedDeposits(results: Array<ReturnType<typeof confirmed>>, amount = 100n) {
  const fixture = new BridgeFixture();
  const mint = newKey().toBase58();
  results.forEach((result, i) => {
    fixture.deposit(fixture.transfer(amount, mint));
    fixture.ackWithdraw(0, BigInt(i), true, result);
    fixture.ackWithdraw(1, BigInt(i), true, result);
  });
  return fixture;
}

describe('cleanup_deposit', () => {
  it('refunds the full amount when Rejected, amount - confirmed when partial, 0 when fully Confirmed', () => {
    const fixture = finalizedDeposits([rejected(2), confirmed(30n), confirmed(100n)]);
    for (const i of [0n, 1n, 2n]) fixture.cleanup(i);
    expect([0, 1, 2].map((i) => fixture.depositEntry(i).refundedAmount)).toEqual([100n, 70n, 0n]);
    expect([0, 1, 2].map((i) => fixture.depositEntry(i).cleanupCompleted)).toEqual([true, true, true]);
    expect(fixture.depositHeader().settledPrefix).toBe(3n);
  });

  it('advances settled_prefix only over consecutive cleaned-up entries', () => {
    const fixture = finalizedDeposits([confirmed(1n), confirmed(1n), confirmed(1n)]);
    fixture.cleanup(1n);
    expect(fixture.depositHeader().settledPrefix).toBe(0n);
    fixture.cleanup(0n);
    expect(fixture.depositHeader().settledPrefix).toBe(2n);
    fixture.cleanup(2n);
    expect(fixture.depositHeader().settledPrefix).toBe(3n);
  });

  it('reports EntryNotFound, InvalidAccount, EntryNotFinalized and CleanupAlreadyCompleted', () => {
    const fixture = finalizedDeposits([confirmed(5n)]);
    fixture.deposit(fixture.transfer(100n, newKey().toBase58()));
    expect(expectProgramError(fixture.source, 'EntryNotFound', () => fixture.cleanup(2n)).code).toBe(6004);
    expect(expectProgramError(fixture.source, 'InvalidAccount', () => fixture.cleanup(0n, newKey())).code).toBe(6008);
    expect(expectProgramError(fixture.source, 'EntryNotFinalized', () => fixture.cleanup(1n)).code).toBe(6005);
    fixture.cleanup(0n);
    expect(expectProgramError(fixture.source, 'CleanupAlreadyCompleted', () => fixture.cleanup(0n)).code).toBe(6006);
  });

  it('checks in order: EntryNotFound, InvalidAccount, EntryNotFinalized', () => {
    const fixture = new BridgeFixture();
    fixture.deposit(fixture.transfer(100n, newKey().toBase58()));
    expectProgramError(fixture.source, 'EntryNotFound', () => fixture.cleanup(1n, newKey()));
    expectProgramError(fixture.source, 'InvalidAccount', () => fixture.cleanup(0n, newKey()));
    expectProgramError(fixture.source, 'EntryNotFinalized', () => fixture.cleanup(0n));
  });

  it('requires the depositor writable and present, the payer signed, the tracker writable', () => {
    const fixture = finalizedDeposits([confirmed(5n)]);
    const ix = { name: 'cleanup_deposit' as const, index: 0n };
    const payer = newKey();
    const cases = [
      [signer(payer), writable(fixture.depositTracker), readonly(fixture.depositor)],
      [signer(payer), writable(fixture.depositTracker)],
      [{ ...signer(payer), isSigner: false }, writable(fixture.depositTracker), writable(fixture.depositor)],
      [signer(payer), readonly(fixture.depositTracker), writable(fixture.depositor)],
    ];
    for (const metas of cases) expectProgramError(fixture.source, 'InvalidAccount', () => fixture.source.run(ix, metas));
  });
});
