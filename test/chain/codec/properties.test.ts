import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeDepositEntries,
  decodeDepositEntry,
  decodeDepositResult,
  decodeTokenPair,
  decodeTrackerHeader,
  decodeWithdrawEntry,
  encodeDepositEntry,
  encodeDepositResult,
  encodeTokenPair,
  encodeTrackerHeader,
  encodeWithdrawEntry,
} from '../../../src/chain/codec/accounts.js';
import {
  INSTRUCTION_DISCRIMINATORS,
  decodeInstructionData,
  depositResultFromArg,
  depositResultToArg,
  encodeInstructionData,
} from '../../../src/chain/codec/instructions.js';
import { ACCOUNT_DISCRIMINATORS } from '../../../src/chain/codec/layout.js';
import { type BridgeError, isBridgeError } from '../../../src/errors.js';
import * as arb from './arbitraries.js';
import { ACCOUNT } from './hand-bytes.js';

const where = { account: ACCOUNT, field: 'result' };

describe('round trips: decode(encode(x)) = x', () => {
  it('DepositResult', () => {
    fc.assert(
      fc.property(arb.depositResult, (result) => {
        const bytes = encodeDepositResult(result);
        expect(bytes).toHaveLength(16);
        expect(decodeDepositResult(bytes, where)).toEqual(result);
      }),
    );
  });

  it('tracker header', () => {
    fc.assert(
      fc.property(arb.trackerHeader, (header) => {
        const bytes = encodeTrackerHeader(header);
        expect(bytes).toHaveLength(848);
        expect(decodeTrackerHeader(bytes, header.kind, ACCOUNT)).toEqual(header);
      }),
    );
  });

  it('DepositEntry', () => {
    fc.assert(
      fc.property(arb.depositEntry, fc.nat(), (entry, index) => {
        const bytes = encodeDepositEntry(entry);
        expect(bytes).toHaveLength(160);
        expect(decodeDepositEntry(bytes, ACCOUNT, index)).toEqual(entry);
      }),
    );
  });

  it('WithdrawEntry', () => {
    fc.assert(
      fc.property(arb.withdrawEntry, fc.nat(), (entry, index) => {
        const bytes = encodeWithdrawEntry(entry);
        expect(bytes).toHaveLength(144);
        expect(decodeWithdrawEntry(bytes, ACCOUNT, index)).toEqual(entry);
      }),
    );
  });

  it('a window of DepositEntry records', () => {
    fc.assert(
      fc.property(fc.array(arb.depositEntry, { maxLength: 8 }), fc.nat(), (entries, start) => {
        const window = new Uint8Array(entries.length * 160);
        for (const [i, entry] of entries.entries()) window.set(encodeDepositEntry(entry), i * 160);
        expect(decodeDepositEntries(window, ACCOUNT, start)).toEqual(entries);
      }),
    );
  });

  it('TokenPair', () => {
    fc.assert(
      fc.property(arb.tokenPair, (pair) => {
        const bytes = encodeTokenPair(pair);
        expect(bytes).toHaveLength(104);
        expect(decodeTokenPair(bytes, ACCOUNT)).toEqual(pair);
      }),
    );
  });

  it('every instruction', () => {
    fc.assert(
      fc.property(arb.instruction, (ix) => {
        expect(decodeInstructionData(encodeInstructionData(ix))).toEqual(ix);
      }),
    );
  });

  it('a DepositResult through its argument form', () => {
    fc.assert(
      fc.property(arb.depositResult, (result) => {
        const back = depositResultFromArg(depositResultToArg(result));
        expect(back).toEqual(result.kind === 'None' ? undefined : result);
      }),
    );
  });
});

/** Decoding arbitrary bytes either succeeds or throws one of the expected typed errors, never anything else. */
function decodesOrThrowsTyped<T>(decode: () => T, codes: BridgeError['code'][]): T | undefined {
  try {
    return decode();
  } catch (err) {
    if (!codes.some((code) => isBridgeError(err, code))) throw err;
    return undefined;
  }
}

describe('decoders on arbitrary bytes', () => {
  it('instruction data: valid discriminator plus random arguments re-encodes to the same bytes', () => {
    const names = Object.keys(INSTRUCTION_DISCRIMINATORS) as (keyof typeof INSTRUCTION_DISCRIMINATORS)[];
    fc.assert(
      fc.property(fc.constantFrom(...names), fc.uint8Array({ maxLength: 140 }), (name, args) => {
        const data = new Uint8Array(8 + args.length);
        data.set(INSTRUCTION_DISCRIMINATORS[name]);
        data.set(args, 8);
        const ix = decodesOrThrowsTyped(() => decodeInstructionData(data), ['CHAIN__MALFORMED_INSTRUCTION']);
        if (ix === undefined || ix.name === 'ack_withdraw') return; // ack_withdraw drops reserved bytes
        expect(encodeInstructionData(ix)).toEqual(data);
      }),
    );
  });

  it('instruction data: any bytes decode or fail with an Anchor code', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (data) => {
        try {
          decodeInstructionData(data);
        } catch (err) {
          expect(isBridgeError(err, 'CHAIN__MALFORMED_INSTRUCTION')).toBe(true);
          expect([100, 101, 102]).toContain((err as BridgeError<'CHAIN__MALFORMED_INSTRUCTION'>).context.anchorCode);
        }
      }),
    );
  });

  it('entries: a record decodes to a value that round-trips, or is reported malformed', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 160, maxLength: 160 }), fc.uint8Array({ minLength: 144, maxLength: 144 }), (d, w) => {
        const deposit = decodesOrThrowsTyped(() => decodeDepositEntry(d, ACCOUNT, 1), ['CHAIN__MALFORMED_ACCOUNT']);
        if (deposit !== undefined) expect(decodeDepositEntry(encodeDepositEntry(deposit), ACCOUNT, 1)).toEqual(deposit);
        const withdraw = decodesOrThrowsTyped(() => decodeWithdrawEntry(w, ACCOUNT, 1), ['CHAIN__MALFORMED_ACCOUNT']);
        if (withdraw !== undefined) expect(decodeWithdrawEntry(encodeWithdrawEntry(withdraw), ACCOUNT, 1)).toEqual(withdraw);
      }),
    );
  });

  it('tracker header: random bytes after a valid discriminator decode or are reported malformed', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 840, maxLength: 840 }), (rest) => {
        const data = new Uint8Array(848);
        data.set(ACCOUNT_DISCRIMINATORS.WithdrawTracker);
        data.set(rest, 8);
        const header = decodesOrThrowsTyped(() => decodeTrackerHeader(data, 'WithdrawTracker', ACCOUNT), ['CHAIN__MALFORMED_ACCOUNT']);
        if (header !== undefined) expect(decodeTrackerHeader(encodeTrackerHeader(header), 'WithdrawTracker', ACCOUNT)).toEqual(header);
      }),
    );
  });

  it('tracker header and token pair: any bytes fail only with typed errors', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 900 }), (data) => {
        const codes: BridgeError['code'][] = ['CHAIN__MALFORMED_ACCOUNT', 'CHAIN__INVALID_DISCRIMINATOR'];
        decodesOrThrowsTyped(() => decodeTrackerHeader(data, 'DepositTracker', ACCOUNT), codes);
        decodesOrThrowsTyped(() => decodeTokenPair(data, ACCOUNT), codes);
      }),
    );
  });
});
