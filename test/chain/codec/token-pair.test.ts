import { describe, expect, it } from 'vitest';
import { decodeTokenPair, encodeTokenPair } from '../../../src/chain/codec/accounts.js';
import type { TokenPair } from '../../../src/chain/types.js';
import { expectMalformedAccount, thrownBridgeError } from './expect-error.js';
import { ACCOUNT, HandBytes, atOffset, key, keyBytes } from './hand-bytes.js';

/** PROTOCOL.md "TokenPair (104 bytes, destination)": disc 8 · u16 · 6 reserved · mint · mint · u8 · 7 reserved · u64 · u64. */
function handTokenPair(): HandBytes {
  return new HandBytes(104)
    .hex(0, '11d62db0e595c547')
    .u16(8, 0x0201) // source_chain_id
    .put(16, keyBytes(7)) // source_mint
    .put(48, keyBytes(8)) // target_mint
    .u8(80, 1) // frozen
    .u64(88, 0xffff_ffff_ffff_ffffn) // limit_remaining
    .u64(96, 12_345n); // vault_balance
}

const pair: TokenPair = {
  sourceChainId: 0x0201,
  sourceMint: key(7),
  targetMint: key(8),
  frozen: true,
  limitRemaining: 0xffff_ffff_ffff_ffffn,
  vaultBalance: 12_345n,
};

describe('TokenPair', () => {
  it('decodes the hand-written 104 bytes', () => {
    expect(decodeTokenPair(atOffset(handTokenPair().bytes), ACCOUNT)).toEqual(pair);
  });

  it('encodes to exactly the hand-written bytes', () => {
    expect(encodeTokenPair(pair)).toEqual(handTokenPair().bytes);
  });

  it('ignores reserved bytes', () => {
    const dirty = handTokenPair().u16(10, 0xffff).u8(87, 0xff).bytes;
    expect(decodeTokenPair(dirty, ACCOUNT)).toEqual(pair);
  });

  it('rejects a wrong discriminator', () => {
    const error = thrownBridgeError(() => decodeTokenPair(handTokenPair().hex(0, 'f7350db49ae8e1fa').bytes, ACCOUNT), 'CHAIN__INVALID_DISCRIMINATOR');
    expect(error.context).toEqual({ account: ACCOUNT, expected: '11d62db0e595c547', actual: 'f7350db49ae8e1fa' });
    expect(error.message).toContain(ACCOUNT);
    expect(error.message).toContain('discriminator');
  });

  it('rejects frozen not 0 or 1', () => {
    expectMalformedAccount(() => decodeTokenPair(handTokenPair().u8(80, 2).bytes, ACCOUNT), ACCOUNT, 'frozen');
  });

  it('rejects data shorter than 104 bytes', () => {
    expectMalformedAccount(() => decodeTokenPair(handTokenPair().bytes.subarray(0, 103), ACCOUNT), ACCOUNT, 'data');
  });
});
