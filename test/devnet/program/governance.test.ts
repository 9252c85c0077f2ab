import { describe, expect, it } from 'vitest';
import { SYSTEM_PROGRAM_ID } from '../../../devnet/program/store.js';
import { BridgeFixture, PROGRAM_ID, confirmed, expectProgramError, newKey, readonly, rejected, signer, writable } from './harness.js';

/** A set_token_pair for a new pair of `mint`: what the account checks below send. */
function setTokenPairOf(mint: string) {
  return { name: 'set_token_pair' as const, sourceMint: mint, targetMint: newKey().toBase58(), frozen: false, limitRemaining: 1n, vaultBalance: 1n };
}

describe('set_token_pair', () => {
  it('creates the pair at its PDA and bumps generation even with nothing pending', () => {
    const fixture = new BridgeFixture();
    const mint = newKey().toBase58();
    fixture.setTokenPair(mint, { frozen: true, limitRemaining: 5n, vaultBalance: 6n });
    expect(fixture.tokenPair(mint)).toMatchObject({ sourceChainId: 1, sourceMint: mint, frozen: true, limitRemaining: 5n, vaultBalance: 6n });
    expect(fixture.target.accounts.get(fixture.tokenPairAddress(mint).toBase58())!.owner).toBe(PROGRAM_ID.toBase58());
    expect(fixture.withdrawHeader().generation).toBe(1n);
    fixture.setTokenPair(mint, { limitRemaining: 50n });
    expect(fixture.tokenPair(mint)).toMatchObject({ frozen: false, limitRemaining: 50n });
    expect(fixture.withdrawHeader().generation).toBe(2n);
  });

  it('removes every non-finalized entry, sets entry_count = settled_prefix and rewinds positions', () => {
    const fixture = new BridgeFixture();
    const mint = fixture.normalMint();
    const data = [1n, 2n, 3n].map((amount) => fixture.transfer(amount, mint));
    fixture.depositAndFinalize(data[0]!);
    fixture.ackDeposit(0, 1n, true, data[1]!);
    fixture.ackDeposit(0, 2n, true, data[2]!);
    fixture.ackDeposit(1, 1n, false, data[1]!);
    fixture.setTokenPair(newKey().toBase58());
    const header = fixture.withdrawHeader();
    expect(header).toMatchObject({ entryCount: 1n, settledPrefix: 1n, generation: 2n });
    expect(header.votes).toEqual([
      { nextIndex: 1n, lastVote: 'Yes' },
      { nextIndex: 1n, lastVote: 'No' },
      { nextIndex: 0n, lastVote: 'None' },
    ]);
    expect(fixture.withdrawEntry(0).status).toBe('Finalized');
    for (const i of [1, 2]) expect(fixture.withdrawEntryBytes(i).every((byte) => byte === 0)).toBe(true);
  });

  it('reports Unauthorized for a signer other than governance', () => {
    const fixture = new BridgeFixture();
    const mint = newKey().toBase58();
    const ix = setTokenPairOf(mint);
    const error = expectProgramError(fixture.target, 'Unauthorized', () =>
      fixture.target.run(ix, [signer(newKey()), writable(fixture.withdrawTracker), writable(fixture.tokenPairAddress(mint))]),
    );
    expect(error.code).toBe(6010);
  });

  it('reports InvalidAccount (before Unauthorized) for a wrong PDA, a read-only pair, an occupied address', () => {
    const fixture = new BridgeFixture();
    const mint = newKey().toBase58();
    const ix = setTokenPairOf(mint);
    const pair = fixture.tokenPairAddress(mint);
    for (const who of [fixture.governance, newKey()]) {
      expectProgramError(fixture.target, 'InvalidAccount', () =>
        fixture.target.run(ix, [signer(who), writable(fixture.withdrawTracker), writable(newKey())]),
      );
      expectProgramError(fixture.target, 'InvalidAccount', () =>
        fixture.target.run(ix, [signer(who), writable(fixture.withdrawTracker), readonly(pair)]),
      );
    }
    fixture.target.accounts.set(pair.toBase58(), { lamports: 1n, owner: newKey().toBase58(), data: new Uint8Array(104), executable: false });
    expectProgramError(fixture.target, 'InvalidAccount', () =>
      fixture.target.run(ix, [signer(fixture.governance), writable(fixture.withdrawTracker), writable(pair)]),
    );
    // A plain system account with lamports at the address is taken over.
    fixture.target.accounts.set(pair.toBase58(), { lamports: 1n, owner: SYSTEM_PROGRAM_ID, data: new Uint8Array(0), executable: false });
    fixture.target.run(ix, [signer(fixture.governance), writable(fixture.withdrawTracker), writable(pair)]);
    expect(fixture.tokenPair(mint).limitRemaining).toBe(1n);
  });
});

describe('reset_pending', () => {
  it('returns every Relaying entry to Initialized and rewinds positions to the lowest such index', () => {
    const fixture = new BridgeFixture();
    const mint = newKey().toBase58();
    const deposits = [1n, 2n, 3n, 4n].map((amount) => fixture.transfer(amount, mint));
    for (const d of deposits) fixture.deposit(d);
    const before = [0, 1, 2, 3].map((i) => fixture.depositEntry(i));
    fixture.ackWithdraw(0, 0n, true, confirmed(1n));
    fixture.ackWithdraw(1, 0n, true, confirmed(1n)); // entry 0 Finalized
    fixture.ackWithdraw(0, 1n, true, rejected(0)); // entry 1 Relaying
    fixture.ackWithdraw(0, 2n, true, confirmed(3n)); // entry 2 Relaying
    fixture.ackWithdraw(1, 1n, false, rejected(0));
    fixture.resetPending();
    expect([0, 1, 2, 3].map((i) => fixture.depositEntry(i).status)).toEqual(['Finalized', 'Initialized', 'Initialized', 'Initialized']);
    for (const i of [1, 2]) {
      expect(fixture.depositEntry(i)).toEqual({ ...before[i], status: 'Initialized', yesVotes: 0, noVotes: 0, proposed: { kind: 'None' } });
    }
    const header = fixture.depositHeader();
    expect(header.generation).toBe(1n);
    expect(header.votes).toEqual([
      { nextIndex: 1n, lastVote: 'Yes' },
      { nextIndex: 1n, lastVote: 'No' },
      { nextIndex: 0n, lastVote: 'None' },
    ]);
  });

  it('bumps generation and rewinds nothing when no entry is Relaying', () => {
    const fixture = new BridgeFixture();
    fixture.deposit(fixture.transfer(1n, newKey().toBase58()));
    fixture.ackWithdraw(0, 0n, true, confirmed(1n));
    fixture.ackWithdraw(1, 0n, true, confirmed(1n));
    fixture.resetPending();
    fixture.resetPending();
    const header = fixture.depositHeader();
    expect(header.generation).toBe(2n);
    expect(header.votes.map((vote) => vote.nextIndex)).toEqual([1n, 1n, 0n]);
  });

  it('reports Unauthorized for a signer other than governance', () => {
    const fixture = new BridgeFixture();
    expectProgramError(fixture.source, 'Unauthorized', () => fixture.resetPending(newKey()));
    expectProgramError(fixture.source, 'InvalidAccount', () =>
      fixture.source.run({ name: 'reset_pending' }, [signer(fixture.governance), readonly(fixture.depositTracker)]),
    );
  });
});
