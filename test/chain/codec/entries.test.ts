import { describe, expect, it } from 'vitest';
import {
  decodeDepositEntries,
  decodeDepositEntry,
  decodeWithdrawEntries,
  decodeWithdrawEntry,
  encodeDepositEntry,
  encodeWithdrawEntry,
} from '../../../src/chain/codec/accounts.js';
import type { DepositEntry, WithdrawEntry } from '../../../src/chain/types.js';
import { expectMalformedAccount } from './expect-error.js';
import { ACCOUNT, HandBytes, atOffset, key, keyBytes } from './hand-bytes.js';

const BIG = 0x0102_0304_0506_0708n; // byte order shows in the vector

/** PROTOCOL.md "DepositEntry (160 bytes, source)", at its offsets. */
function handDepositEntry(): HandBytes {
  return new HandBytes(160)
    .u64(0, BIG) // amount
    .put(8, keyBytes(1)) // depositor
    .put(40, keyBytes(2)) // recipient
    .put(72, keyBytes(3)) // source_mint
    .u8(104, 2) // status Finalized
    .u8(105, 1) // cleanup_completed
    .u16(106, 0b101) // yes_votes
    .u16(108, 0b010) // no_votes
    .u8(112, 2) // proposed.tag Rejected
    .u8(113, 4) // proposed.reason TokenPairNotFound
    .u8(128, 1) // result.tag Confirmed
    .u64(136, 900n) // result.amount
    .u64(144, BIG - 900n) // refunded_amount
    .u64(152, 77n); // deposit_slot
}

const depositEntry: DepositEntry = {
  amount: BIG,
  depositor: key(1),
  recipient: key(2),
  sourceMint: key(3),
  status: 'Finalized',
  cleanupCompleted: true,
  yesVotes: 0b101,
  noVotes: 0b010,
  proposed: { kind: 'Rejected', reason: 'TokenPairNotFound' },
  result: { kind: 'Confirmed', amount: 900n },
  refundedAmount: BIG - 900n,
  depositSlot: 77n,
};

/** PROTOCOL.md "WithdrawEntry (144 bytes, destination)", at its offsets. */
function handWithdrawEntry(): HandBytes {
  return new HandBytes(144)
    .u8(0, 2) // status Finalized
    .u8(1, 1) // created_token_account Created
    .u16(2, 0b11) // yes_votes
    .u16(4, 0b100) // no_votes
    .u64(8, BIG) // amount
    .put(16, keyBytes(4)) // recipient
    .put(48, keyBytes(5)) // source_mint
    .u8(80, 1) // result.tag Confirmed
    .u64(88, 600n) // result.amount
    .put(96, keyBytes(6)) // token_account
    .u64(128, 1234n); // finalized_slot
}

const withdrawEntry: WithdrawEntry = {
  status: 'Finalized',
  createdTokenAccount: 'Created',
  yesVotes: 0b11,
  noVotes: 0b100,
  amount: BIG,
  recipient: key(4),
  sourceMint: key(5),
  result: { kind: 'Confirmed', amount: 600n },
  tokenAccount: key(6),
  finalizedSlot: 1234n,
};

const ZERO_KEY = key(0);

describe('DepositEntry vector', () => {
  it('decodes the hand-written record', () => {
    expect(decodeDepositEntry(atOffset(handDepositEntry().bytes), ACCOUNT, 0)).toEqual(depositEntry);
  });

  it('encodes to exactly the hand-written record', () => {
    expect(encodeDepositEntry(depositEntry)).toEqual(handDepositEntry().bytes);
  });

  it('ignores reserved bytes (110..112 and inside results)', () => {
    const dirty = handDepositEntry().u16(110, 0xffff).u8(114, 9).u8(135, 9).bytes;
    expect(decodeDepositEntry(dirty, ACCOUNT, 0)).toEqual(depositEntry);
  });

  it('decodes an Initialized entry with empty results', () => {
    const bytes = new HandBytes(160).u64(0, 5n).put(8, keyBytes(1)).bytes;
    expect(decodeDepositEntry(bytes, ACCOUNT, 0)).toMatchObject({
      amount: 5n,
      status: 'Initialized',
      cleanupCompleted: false,
      proposed: { kind: 'None' },
      result: { kind: 'None' },
      recipient: ZERO_KEY,
    });
  });
});

describe('WithdrawEntry vector', () => {
  it('decodes the hand-written record', () => {
    expect(decodeWithdrawEntry(atOffset(handWithdrawEntry().bytes), ACCOUNT, 0)).toEqual(withdrawEntry);
  });

  it('encodes to exactly the hand-written record (reserved 136..144 zero)', () => {
    expect(encodeWithdrawEntry(withdrawEntry)).toEqual(handWithdrawEntry().bytes);
  });

  it('decodes a removed (all-zero) record as Empty', () => {
    expect(decodeWithdrawEntry(new Uint8Array(144), ACCOUNT, 3)).toEqual({
      status: 'Empty',
      createdTokenAccount: 'Pending',
      yesVotes: 0,
      noVotes: 0,
      amount: 0n,
      recipient: ZERO_KEY,
      sourceMint: ZERO_KEY,
      result: { kind: 'None' },
      tokenAccount: ZERO_KEY,
      finalizedSlot: 0n,
    });
  });

  it('ignores reserved bytes', () => {
    const dirty = handWithdrawEntry().u16(6, 0xffff).u64(136, BIG).bytes;
    expect(decodeWithdrawEntry(dirty, ACCOUNT, 0)).toEqual(withdrawEntry);
  });
});

describe('DepositEntry validation names the account, the entry index and the field', () => {
  it.each([
    ['status', (h: HandBytes) => h.u8(104, 3)],
    ['cleanup_completed', (h: HandBytes) => h.u8(105, 2)],
    ['proposed.tag', (h: HandBytes) => h.u8(112, 3)],
    ['proposed.reason', (h: HandBytes) => h.u8(113, 5)],
    ['proposed.amount', (h: HandBytes) => h.u64(120, 1n)],
    ['result.reason', (h: HandBytes) => h.u8(129, 1)],
    ['result.tag', (h: HandBytes) => h.u8(128, 0xff)],
  ])('entries[42].%s', (field, corrupt) => {
    const bytes = corrupt(handDepositEntry()).bytes;
    expectMalformedAccount(() => decodeDepositEntry(bytes, ACCOUNT, 42), ACCOUNT, `entries[42].${field}`);
  });

  it.each([159, 161, 0])('rejects a record of %i bytes', (size) => {
    expectMalformedAccount(() => decodeDepositEntry(new Uint8Array(size), ACCOUNT, 8), ACCOUNT, 'entries[8]');
  });
});

describe('WithdrawEntry validation names the account, the entry index and the field', () => {
  it.each([
    ['status', (h: HandBytes) => h.u8(0, 3)],
    ['created_token_account', (h: HandBytes) => h.u8(1, 3)],
    ['result.tag', (h: HandBytes) => h.u8(80, 3)],
    ['result.reason', (h: HandBytes) => h.u8(81, 2)],
  ])('entries[7].%s', (field, corrupt) => {
    const bytes = corrupt(handWithdrawEntry()).bytes;
    expectMalformedAccount(() => decodeWithdrawEntry(bytes, ACCOUNT, 7), ACCOUNT, `entries[7].${field}`);
  });

  it('rejects a record of the wrong size', () => {
    expectMalformedAccount(() => decodeWithdrawEntry(new Uint8Array(160), ACCOUNT, 1), ACCOUNT, 'entries[1]');
  });
});

describe('entry windows (dataSlice reads)', () => {
  function window(records: Uint8Array[]): Uint8Array {
    const out = new Uint8Array(records.reduce((n, r) => n + r.length, 0));
    let offset = 0;
    for (const r of records) {
      out.set(r, offset);
      offset += r.length;
    }
    return out;
  }

  it('decodes consecutive DepositEntry records', () => {
    const second = handDepositEntry().u64(0, 1n).bytes;
    const entries = decodeDepositEntries(atOffset(window([handDepositEntry().bytes, second])), ACCOUNT, 10);
    expect(entries).toEqual([depositEntry, { ...depositEntry, amount: 1n }]);
  });

  it('decodes consecutive WithdrawEntry records', () => {
    const entries = decodeWithdrawEntries(window([handWithdrawEntry().bytes, new Uint8Array(144)]), ACCOUNT, 0);
    expect(entries).toHaveLength(2);
    expect(entries[0]).toEqual(withdrawEntry);
    expect(entries[1]?.status).toBe('Empty');
  });

  it('decodes an empty window to no entries', () => {
    expect(decodeDepositEntries(new Uint8Array(0), ACCOUNT, 5)).toEqual([]);
  });

  it('names the absolute index of a bad record inside the window', () => {
    const bad = handWithdrawEntry().u8(0, 9).bytes;
    const bytes = window([handWithdrawEntry().bytes, handWithdrawEntry().bytes, bad]);
    expectMalformedAccount(() => decodeWithdrawEntries(bytes, ACCOUNT, 100), ACCOUNT, 'entries[102].status');
  });

  it('rejects a window that is not a whole number of records', () => {
    expectMalformedAccount(() => decodeDepositEntries(new Uint8Array(161), ACCOUNT, 3), ACCOUNT, 'entries[3..]');
    expectMalformedAccount(() => decodeWithdrawEntries(new Uint8Array(143), ACCOUNT, 0), ACCOUNT, 'entries[0..]');
  });
});

describe('entry encoding guards', () => {
  it('refuses values that do not fit their field', () => {
    expect(() => encodeDepositEntry({ ...depositEntry, yesVotes: 0x1_0000 })).toThrow(/yesVotes/);
    expect(() => encodeDepositEntry({ ...depositEntry, amount: -1n })).toThrow(/amount/);
    expect(() => encodeWithdrawEntry({ ...withdrawEntry, tokenAccount: 'short' })).toThrow(/tokenAccount/);
    expect(() => encodeWithdrawEntry({ ...withdrawEntry, result: { kind: 'Confirmed', amount: 1n << 64n } })).toThrow(/result\.amount/);
  });
});
