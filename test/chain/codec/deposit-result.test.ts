import { describe, expect, it } from 'vitest';
import { decodeDepositResult, encodeDepositResult } from '../../../src/chain/codec/accounts.js';
import { depositResultFromArg, depositResultToArg } from '../../../src/chain/codec/instructions.js';
import type { DepositResult } from '../../../src/chain/types.js';
import { expectMalformedAccount } from './expect-error.js';
import { ACCOUNT, HandBytes } from './hand-bytes.js';

const where = { account: ACCOUNT, field: 'entries[3].result' };

/** PROTOCOL.md "DepositResult (16 bytes inside accounts)": tag u8, reason u8, 6 reserved, amount u64. */
function handResult(tag: number, reason: number, amount: bigint): HandBytes {
  return new HandBytes(16).u8(0, tag).u8(1, reason).u64(8, amount);
}

const vectors: [string, HandBytes, DepositResult][] = [
  ['None', handResult(0, 0, 0n), { kind: 'None' }],
  ['Confirmed', handResult(1, 0, 0xdead_beefn), { kind: 'Confirmed', amount: 0xdead_beefn }],
  ['Confirmed zero', handResult(1, 0, 0n), { kind: 'Confirmed', amount: 0n }],
  ['Rejected InternalError', handResult(2, 0, 0n), { kind: 'Rejected', reason: 'InternalError' }],
  ['Rejected InsufficientFunds', handResult(2, 1, 0n), { kind: 'Rejected', reason: 'InsufficientFunds' }],
  ['Rejected LimitExceeded', handResult(2, 2, 0n), { kind: 'Rejected', reason: 'LimitExceeded' }],
  ['Rejected TokenPairFrozen', handResult(2, 3, 0n), { kind: 'Rejected', reason: 'TokenPairFrozen' }],
  ['Rejected TokenPairNotFound', handResult(2, 4, 0n), { kind: 'Rejected', reason: 'TokenPairNotFound' }],
];

describe('DepositResult inside accounts', () => {
  it.each(vectors)('%s decodes and encodes byte for byte', (_name, hand, result) => {
    expect(decodeDepositResult(hand.bytes, where)).toEqual(result);
    expect(encodeDepositResult(result)).toEqual(hand.bytes);
  });

  it('ignores the 6 reserved bytes', () => {
    expect(decodeDepositResult(handResult(1, 0, 5n).hex(2, 'ffffffffffff').bytes, where)).toEqual({ kind: 'Confirmed', amount: 5n });
  });

  it.each([
    ['unknown tag', handResult(3, 0, 0n), 'tag'],
    ['unknown reason', handResult(2, 5, 0n), 'reason'],
    ['Rejected with an amount', handResult(2, 1, 1n), 'amount'],
    ['Confirmed with a reason', handResult(1, 1, 1n), 'reason'],
    ['None with a reason', handResult(0, 2, 0n), 'reason'],
    ['None with an amount', handResult(0, 0, 9n), 'amount'],
  ])('rejects %s, naming the field', (_name, hand, part) => {
    expectMalformedAccount(() => decodeDepositResult(hand.bytes, where), ACCOUNT, `entries[3].result.${part}`);
  });

  it('rejects a slice that is not 16 bytes', () => {
    expectMalformedAccount(() => decodeDepositResult(new Uint8Array(15), where), ACCOUNT, 'entries[3].result');
    expectMalformedAccount(() => decodeDepositResult(new Uint8Array(17), where), ACCOUNT, 'entries[3].result');
  });
});

describe('DepositResult as an instruction argument (PROTOCOL InvalidResult rules)', () => {
  it.each([
    [
      { tag: 1, reason: 0, amount: 7n },
      { kind: 'Confirmed', amount: 7n },
    ],
    [
      { tag: 2, reason: 3, amount: 0n },
      { kind: 'Rejected', reason: 'TokenPairFrozen' },
    ],
    [{ tag: 0, reason: 0, amount: 0n }, undefined],
    [{ tag: 3, reason: 0, amount: 0n }, undefined],
    [{ tag: 255, reason: 0, amount: 0n }, undefined],
    [{ tag: 2, reason: 5, amount: 0n }, undefined],
    [{ tag: 1, reason: 1, amount: 7n }, undefined],
    [{ tag: 2, reason: 1, amount: 1n }, undefined],
  ] as const)('%o -> %o', (arg, result) => {
    expect(depositResultFromArg(arg)).toEqual(result);
  });

  it('maps results to their raw argument fields', () => {
    expect(depositResultToArg({ kind: 'None' })).toEqual({ tag: 0, reason: 0, amount: 0n });
    expect(depositResultToArg({ kind: 'Confirmed', amount: 9n })).toEqual({ tag: 1, reason: 0, amount: 9n });
    expect(depositResultToArg({ kind: 'Rejected', reason: 'LimitExceeded' })).toEqual({ tag: 2, reason: 2, amount: 0n });
  });
});
