import { Keypair, PublicKey } from '@solana/web3.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PROGRAM_ID } from '../../src/chain/codec/layout.js';
import { depositTrackerAddress, tokenPairAddress, withdrawTrackerAddress } from '../../src/chain/pda.js';

const programId = new PublicKey(DEFAULT_PROGRAM_ID);

/** Seeds written by hand from PROTOCOL.md: ASCII prefix, u16 little-endian, then the mint. */
function derive(seeds: Uint8Array[], program = programId): string {
  return PublicKey.findProgramAddressSync(seeds, program)[0].toBase58();
}

const ascii = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('PDAs', () => {
  it('DepositTracker: "deposit_tracker" + u16le(T)', () => {
    expect(depositTrackerAddress(programId, 0x0102).toBase58()).toBe(derive([ascii('deposit_tracker'), Uint8Array.of(0x02, 0x01)]));
  });

  it('WithdrawTracker: "withdraw_tracker" + u16le(S)', () => {
    expect(withdrawTrackerAddress(programId, 1).toBase58()).toBe(derive([ascii('withdraw_tracker'), Uint8Array.of(1, 0)]));
  });

  it('TokenPair: "token_pair" + u16le(S) + source_mint', () => {
    const mint = new PublicKey(new Uint8Array(32).fill(7));
    expect(tokenPairAddress(programId, 0xffff, mint).toBase58()).toBe(
      derive([ascii('token_pair'), Uint8Array.of(0xff, 0xff), new Uint8Array(32).fill(7)]),
    );
  });

  it('matches hand-built seeds for any chain id, mint and program (memoized or not)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 0xffff }),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.constantFrom(programId, Keypair.generate().publicKey),
        (chainId, mint, program) => {
          const le = Uint8Array.of(chainId & 0xff, chainId >> 8);
          for (let round = 0; round < 2; round += 1) {
            expect(depositTrackerAddress(program, chainId).toBase58()).toBe(derive([ascii('deposit_tracker'), le], program));
            expect(withdrawTrackerAddress(program, chainId).toBase58()).toBe(derive([ascii('withdraw_tracker'), le], program));
            expect(tokenPairAddress(program, chainId, new PublicKey(mint)).toBase58()).toBe(derive([ascii('token_pair'), le, mint], program));
          }
        },
      ),
      { numRuns: 30 },
    );
  });

  it('gives different addresses per program, chain and tracker kind', () => {
    const other = Keypair.generate().publicKey;
    const addresses = new Set([
      depositTrackerAddress(programId, 1).toBase58(),
      depositTrackerAddress(programId, 2).toBase58(),
      depositTrackerAddress(other, 1).toBase58(),
      withdrawTrackerAddress(programId, 1).toBase58(),
    ]);
    expect(addresses.size).toBe(4);
  });

  it.each([-1, 65_536, 1.5, Number.NaN])('refuses chain id %s', (chainId) => {
    expect(() => depositTrackerAddress(programId, chainId)).toThrow(/targetChainId/);
    expect(() => withdrawTrackerAddress(programId, chainId)).toThrow(/sourceChainId/);
  });
});

describe('PDA memo', () => {
  it('stays correct past its bound (oldest entries evicted and derived again)', () => {
    const mints = Array.from({ length: 600 }, (_, i) => {
      const bytes = new Uint8Array(32);
      new DataView(bytes.buffer).setUint32(0, i + 1, true);
      return bytes;
    });
    const first = mints.map((mint) => tokenPairAddress(programId, 3, new PublicKey(mint)).toBase58());
    const again = mints.map((mint) => tokenPairAddress(programId, 3, new PublicKey(mint)).toBase58());
    expect(again).toEqual(first);
    expect(again[0]).toBe(derive([ascii('token_pair'), Uint8Array.of(3, 0), mints[0]!]));
    expect(new Set(first).size).toBe(600);
  });
});
