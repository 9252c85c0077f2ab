import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DepositResultWire } from '../../../src/chain/port/bridge-chains.js';
import { depositResultFromWire, depositResultToWire, parseU64 } from '../../../src/chain/port/result-wire.js';
import { thrownBridgeError } from '../codec/expect-error.js';

const U64_MAX = 2n ** 64n - 1n;

describe('DepositResult <-> wire', () => {
  it('maps Confirmed amounts to decimal strings and back', () => {
    expect(depositResultToWire({ kind: 'Confirmed', amount: U64_MAX })).toEqual({ kind: 'Confirmed', amount: '18446744073709551615' });
    expect(depositResultFromWire({ kind: 'Confirmed', amount: '18446744073709551615' })).toEqual({ kind: 'Confirmed', amount: U64_MAX });
  });

  it('maps Rejected reasons unchanged', () => {
    expect(depositResultToWire({ kind: 'Rejected', reason: 'TokenPairFrozen' })).toEqual({ kind: 'Rejected', reason: 'TokenPairFrozen' });
    expect(depositResultFromWire({ kind: 'Rejected', reason: 'InsufficientFunds' })).toEqual({ kind: 'Rejected', reason: 'InsufficientFunds' });
  });

  it('round-trips every settled result, also through JSON', () => {
    const settled = fc.oneof(
      fc.bigInt({ min: 0n, max: U64_MAX }).map((amount) => ({ kind: 'Confirmed' as const, amount })),
      fc
        .constantFrom('InternalError', 'InsufficientFunds', 'LimitExceeded', 'TokenPairFrozen', 'TokenPairNotFound' as const)
        .map((reason) => ({ kind: 'Rejected' as const, reason })),
    );
    fc.assert(
      fc.property(settled, (result) => {
        const wire = JSON.parse(JSON.stringify(depositResultToWire(result))) as DepositResultWire;
        expect(depositResultFromWire(wire)).toEqual(result);
      }),
    );
  });

  it('refuses None: a vote never carries it', () => {
    const error = thrownBridgeError(() => depositResultToWire({ kind: 'None' }, 'votes[2].result'), 'CHAIN__INVALID_VOTE');
    expect(error.context.field).toBe('votes[2].result');
    expect(error.message).toContain('votes[2].result');
  });

  it('refuses an unknown kind or reason from JSON, naming the field', () => {
    const badReason = JSON.parse('{"kind":"Rejected","reason":"Nope"}') as DepositResultWire;
    expect(thrownBridgeError(() => depositResultFromWire(badReason), 'CHAIN__INVALID_VOTE').context.field).toBe('result.reason');
    const badKind = JSON.parse('{"kind":"None"}') as DepositResultWire;
    expect(thrownBridgeError(() => depositResultFromWire(badKind), 'CHAIN__INVALID_VOTE').context.field).toBe('result.kind');
  });
});

describe('parseU64', () => {
  it.each([
    ['0', 0n],
    ['1', 1n],
    ['18446744073709551615', U64_MAX],
  ])('parses %s', (text, value) => {
    expect(parseU64(text, 'amount')).toBe(value);
  });

  it.each(['', '-1', '+1', '01', '1.0', '1e3', ' 1', '1 ', '0x10', '18446744073709551616', '99999999999999999999', '١٢'])(
    'refuses %j with a message naming the field',
    (text) => {
      const error = thrownBridgeError(() => parseU64(text, 'votes[0].amount'), 'CHAIN__INVALID_VOTE');
      expect(error.context).toMatchObject({ field: 'votes[0].amount', value: text });
      expect(error.message).toContain('votes[0].amount');
    },
  );

  it('refuses a non-string (wire data that came through JSON as a number)', () => {
    expect(thrownBridgeError(() => parseU64(5 as unknown as string, 'amount'), 'CHAIN__INVALID_VOTE').context.value).toBe('5');
    expect(thrownBridgeError(() => parseU64(5n as unknown as string, 'amount'), 'CHAIN__INVALID_VOTE').message).toContain('amount is 5');
  });
});
