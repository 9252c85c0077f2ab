import { describe, expect, it } from 'vitest';
import { decodeTrackerHeader, encodeTrackerHeader } from '../../../src/chain/codec/accounts.js';
import type { TrackerHeader } from '../../../src/chain/types.js';
import { expectMalformedAccount, thrownBridgeError } from './expect-error.js';
import { ACCOUNT, HandBytes, atOffset, key, keyBytes } from './hand-bytes.js';

const DEPOSIT_TRACKER_DISCRIMINATOR = 'f7350db49ae8e1fa';
const WITHDRAW_TRACKER_DISCRIMINATOR = 'b85cdf0f4deba5d6';

/** PROTOCOL.md "Tracker header", field by field at its offsets. */
function handHeader(discriminatorHex = DEPOSIT_TRACKER_DISCRIMINATOR): HandBytes {
  return new HandBytes(848)
    .hex(0, discriminatorHex)
    .u16(8, 7) // source_chain_id
    .u16(10, 9) // target_chain_id
    .u8(12, 2) // threshold
    .u8(13, 3) // authority_count
    .u64(16, 5n) // entry_count
    .u64(24, 100n) // capacity
    .u64(32, 2n) // settled_prefix
    .u64(40, 4n) // generation
    .put(48, keyBytes(0xaa)) // governance
    .put(80, keyBytes(1))
    .put(112, keyBytes(2))
    .put(144, keyBytes(3))
    .u64(592, 5n) // votes[0].next_index
    .u8(600, 1) // votes[0].last_vote Yes
    .u64(608, 3n)
    .u8(616, 2) // No
    .u64(624, 0n)
    .u8(632, 0); // None
}

const expected: TrackerHeader = {
  kind: 'DepositTracker',
  sourceChainId: 7,
  targetChainId: 9,
  threshold: 2,
  authorityCount: 3,
  entryCount: 5n,
  capacity: 100n,
  settledPrefix: 2n,
  generation: 4n,
  governance: key(0xaa),
  authorities: [key(1), key(2), key(3)],
  votes: [
    { nextIndex: 5n, lastVote: 'Yes' },
    { nextIndex: 3n, lastVote: 'No' },
    { nextIndex: 0n, lastVote: 'None' },
  ],
};

describe('tracker header vector', () => {
  it('decodes the hand-written 848 bytes', () => {
    expect(decodeTrackerHeader(handHeader().bytes, 'DepositTracker', ACCOUNT)).toEqual(expected);
  });

  it('decodes from a Buffer-like view at a non-zero byteOffset', () => {
    expect(decodeTrackerHeader(atOffset(handHeader().bytes), 'DepositTracker', ACCOUNT)).toEqual(expected);
  });

  it('encodes to exactly the hand-written bytes', () => {
    expect(encodeTrackerHeader(expected)).toEqual(handHeader().bytes);
  });

  it('encodes a WithdrawTracker with its own discriminator', () => {
    const bytes = encodeTrackerHeader({ ...expected, kind: 'WithdrawTracker' });
    expect(bytes).toEqual(handHeader(WITHDRAW_TRACKER_DISCRIMINATOR).bytes);
    expect(decodeTrackerHeader(bytes, 'WithdrawTracker', ACCOUNT).kind).toBe('WithdrawTracker');
  });

  it('reads the header from a whole account (header followed by entries)', () => {
    const account = new Uint8Array(848 + 2 * 160);
    account.set(handHeader().bytes);
    account.fill(0xee, 848);
    expect(decodeTrackerHeader(account, 'DepositTracker', ACCOUNT)).toEqual(expected);
  });

  it('ignores unused authority and vote slots and reserved bytes, and encodes them as zeros', () => {
    const dirty = handHeader()
      .u16(14, 0xffff) // header reserved
      .put(80 + 3 * 32, keyBytes(9)) // authorities[3], unused
      .u8(600 + 7, 0xff) // votes[0] reserved
      .u8(592 + 3 * 16 + 8, 7).bytes; // votes[3].last_vote, unused: not validated
    const decoded = decodeTrackerHeader(dirty, 'DepositTracker', ACCOUNT);
    expect(decoded).toEqual(expected);
    expect(encodeTrackerHeader(decoded)).toEqual(handHeader().bytes);
  });

  it('holds 16 authorities', () => {
    const full = handHeader().u8(13, 16).u8(12, 16);
    for (let k = 0; k < 16; k += 1) full.put(80 + 32 * k, keyBytes(k + 1));
    const decoded = decodeTrackerHeader(full.bytes, 'DepositTracker', ACCOUNT);
    expect(decoded.authorities).toHaveLength(16);
    expect(decoded.authorities[15]).toBe(key(16));
    expect(decoded.votes).toHaveLength(16);
    expect(encodeTrackerHeader(decoded)).toEqual(full.bytes);
  });
});

describe('tracker header validation', () => {
  it('rejects a wrong discriminator with both values in hex', () => {
    const error = thrownBridgeError(
      () => decodeTrackerHeader(handHeader(WITHDRAW_TRACKER_DISCRIMINATOR).bytes, 'DepositTracker', ACCOUNT),
      'CHAIN__INVALID_DISCRIMINATOR',
    );
    expect(error.context).toEqual({ account: ACCOUNT, expected: DEPOSIT_TRACKER_DISCRIMINATOR, actual: WITHDRAW_TRACKER_DISCRIMINATOR });
    expect(error.message).toContain(ACCOUNT);
    expect(error.message).toContain('discriminator');
  });

  it('rejects data shorter than the header', () => {
    expectMalformedAccount(() => decodeTrackerHeader(handHeader().bytes.subarray(0, 847), 'DepositTracker', ACCOUNT), ACCOUNT, 'header');
  });

  it('rejects data shorter than the discriminator', () => {
    expectMalformedAccount(() => decodeTrackerHeader(new Uint8Array(5), 'DepositTracker', ACCOUNT), ACCOUNT, 'discriminator');
  });

  it.each([0, 17, 255])('rejects authority_count %i', (count) => {
    const bytes = handHeader().u8(13, count).u8(12, 1).bytes;
    expectMalformedAccount(() => decodeTrackerHeader(bytes, 'DepositTracker', ACCOUNT), ACCOUNT, 'authority_count');
  });

  it.each([0, 4, 200])('rejects threshold %i with 3 authorities', (threshold) => {
    const bytes = handHeader().u8(12, threshold).bytes;
    expectMalformedAccount(() => decodeTrackerHeader(bytes, 'DepositTracker', ACCOUNT), ACCOUNT, 'threshold');
  });

  it('accepts threshold = authority_count', () => {
    expect(decodeTrackerHeader(handHeader().u8(12, 3).bytes, 'DepositTracker', ACCOUNT).threshold).toBe(3);
  });

  it('rejects an unknown last_vote tag in a used slot, naming the slot', () => {
    const bytes = handHeader().u8(592 + 16 + 8, 3).bytes;
    expectMalformedAccount(() => decodeTrackerHeader(bytes, 'DepositTracker', ACCOUNT), ACCOUNT, 'votes[1].last_vote');
  });

  it('rejects entry_count above capacity', () => {
    const bytes = handHeader().u64(16, 101n).bytes;
    expectMalformedAccount(() => decodeTrackerHeader(bytes, 'DepositTracker', ACCOUNT), ACCOUNT, 'entry_count');
  });

  it.each([
    { kind: 'DepositTracker' as const, discriminator: DEPOSIT_TRACKER_DISCRIMINATOR, max: 65_530n },
    { kind: 'WithdrawTracker' as const, discriminator: WITHDRAW_TRACKER_DISCRIMINATOR, max: 72_811n },
  ])('bounds capacity by what a 10 MiB account holds: $kind up to $max entries', ({ kind, discriminator, max }) => {
    const at = (capacity: bigint) => handHeader(discriminator).u64(24, capacity).bytes;
    expect(decodeTrackerHeader(at(max), kind, ACCOUNT).capacity).toBe(max);
    expectMalformedAccount(() => decodeTrackerHeader(at(max + 1n), kind, ACCOUNT), ACCOUNT, 'capacity');
  });

  it('rejects the forged header entry_count = capacity = 2^52 before anything is sized by it', () => {
    const bytes = handHeader()
      .u64(16, 2n ** 52n)
      .u64(24, 2n ** 52n)
      .u64(32, 0n).bytes;
    const err = expectMalformedAccount(() => decodeTrackerHeader(bytes, 'DepositTracker', ACCOUNT), ACCOUNT, 'capacity');
    expect(err.message).toContain(`account ${ACCOUNT}: field capacity is 4503599627370496, above the 65530 entries a 10 MiB DepositTracker can hold`);
  });

  it('rejects settled_prefix above entry_count', () => {
    const bytes = handHeader().u64(32, 6n).bytes;
    expectMalformedAccount(() => decodeTrackerHeader(bytes, 'DepositTracker', ACCOUNT), ACCOUNT, 'settled_prefix');
  });
});

describe('tracker header encoding guards', () => {
  it('refuses authorities that do not match authorityCount', () => {
    expect(() => encodeTrackerHeader({ ...expected, authorityCount: 2 })).toThrow(RangeError);
  });

  it('refuses a u64 out of range instead of wrapping', () => {
    expect(() => encodeTrackerHeader({ ...expected, entryCount: 1n << 64n })).toThrow(/entryCount/);
    expect(() => encodeTrackerHeader({ ...expected, generation: -1n })).toThrow(/generation/);
  });

  it('refuses a governance key that is not 32 bytes of base58', () => {
    expect(() => encodeTrackerHeader({ ...expected, governance: 'abc' })).toThrow(/governance/);
    expect(() => encodeTrackerHeader({ ...expected, governance: '0OIl' })).toThrow(/governance/);
  });
});
