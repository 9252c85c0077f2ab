import { describe, expect, it } from 'vitest';
import { decodeInstructionData, encodeInstructionData, type BridgeInstruction } from '../../../src/chain/codec/instructions.js';
import { thrownBridgeError } from './expect-error.js';
import { HandBytes, key, keyBytes, sha256Prefix } from './hand-bytes.js';

const U64_MAX = 0xffff_ffff_ffff_ffffn;

/** Each vector: the instruction and its data written by hand from PROTOCOL.md (Borsh args after the discriminator). */
const vectors: [BridgeInstruction, HandBytes][] = [
  [
    { name: 'ack_deposit', index: 0x0102_0304n, approve: true, amount: U64_MAX, recipient: key(2), sourceMint: key(3) },
    new HandBytes(89).hex(0, '59a927a74a8affcf').u64(8, 0x0102_0304n).u8(16, 1).u64(17, U64_MAX).put(25, keyBytes(2)).put(57, keyBytes(3)),
  ],
  [
    { name: 'ack_withdraw', index: 9n, approve: false, result: { tag: 2, reason: 3, amount: 0n } },
    new HandBytes(33).hex(0, '8b205c923efaf7e6').u64(8, 9n).u8(16, 0).u8(17, 2).u8(18, 3).u64(25, 0n),
  ],
  [
    { name: 'ack_withdraw', index: 10n, approve: true, result: { tag: 1, reason: 0, amount: 500n } },
    new HandBytes(33).hex(0, '8b205c923efaf7e6').u64(8, 10n).u8(16, 1).u8(17, 1).u64(25, 500n),
  ],
  [{ name: 'cleanup_deposit', index: 65_536n }, new HandBytes(16).hex(0, 'cfca1f62257a91a5').u64(8, 65_536n)],
  [
    { name: 'initialize_deposit_tracker', targetChainId: 2, capacity: 1000n, threshold: 2, authorities: [key(1), key(2), key(3)] },
    new HandBytes(23 + 96)
      .hex(0, '5cb3dbc8e59b0a28')
      .u16(8, 2)
      .u64(10, 1000n)
      .u8(18, 2)
      .u32(19, 3)
      .put(23, keyBytes(1))
      .put(55, keyBytes(2))
      .put(87, keyBytes(3)),
  ],
  [
    { name: 'initialize_withdraw_tracker', sourceChainId: 0xfffe, capacity: 0n, threshold: 1, authorities: [] },
    new HandBytes(23).hex(0, 'ac7607c1208ca476').u16(8, 0xfffe).u64(10, 0n).u8(18, 1).u32(19, 0),
  ],
  [
    { name: 'deposit', amount: 42n, recipient: key(9), sourceMint: key(10) },
    new HandBytes(80).hex(0, 'f223c68952e1f2b6').u64(8, 42n).put(16, keyBytes(9)).put(48, keyBytes(10)),
  ],
  [{ name: 'withdraw', index: 3n }, new HandBytes(16).hex(0, 'b712469c946da122').u64(8, 3n)],
  [
    { name: 'set_token_pair', sourceMint: key(11), targetMint: key(12), frozen: true, limitRemaining: 7n, vaultBalance: U64_MAX },
    new HandBytes(89).hex(0, '44b0e3b3e5c1e29c').put(8, keyBytes(11)).put(40, keyBytes(12)).u8(72, 1).u64(73, 7n).u64(81, U64_MAX),
  ],
  [{ name: 'reset_pending' }, new HandBytes(8).hex(0, '1cf6ba497b77d2dc')],
];

describe('instruction vectors', () => {
  it.each(vectors)('$name encodes to the hand-written data', (ix, hand) => {
    expect(encodeInstructionData(ix)).toEqual(hand.bytes);
  });

  it.each(vectors)('$name decodes from the hand-written data', (ix, hand) => {
    expect(decodeInstructionData(hand.bytes)).toEqual(ix);
  });

  it.each(vectors)('$name starts with sha256("global:<name>")[0..8]', (ix, hand) => {
    expect(Buffer.from(hand.bytes.subarray(0, 8)).toString('hex')).toBe(sha256Prefix(`global:${ix.name}`));
  });
});

function expectAnchorCode(data: Uint8Array, anchorCode: number, instruction: string): void {
  const error = thrownBridgeError(() => decodeInstructionData(data), 'CHAIN__MALFORMED_INSTRUCTION');
  expect(error.context.anchorCode).toBe(anchorCode);
  expect(error.context.instruction).toBe(instruction);
  expect(error.message).toContain(instruction);
}

describe('instruction decoding failures, as the program reports them', () => {
  it.each([0, 1, 7])('data of %i bytes is InstructionMissing (100)', (size) => {
    expectAnchorCode(new Uint8Array(size), 100, 'unknown');
  });

  it('an unknown discriminator is InstructionFallbackNotFound (101)', () => {
    expectAnchorCode(new HandBytes(16).hex(0, sha256Prefix('global:vote')).bytes, 101, 'unknown');
    expectAnchorCode(new Uint8Array(8), 101, 'unknown');
  });

  it.each(vectors.filter(([ix]) => ix.name !== 'reset_pending'))('$name one byte short is 102', (ix, hand) => {
    expectAnchorCode(hand.bytes.subarray(0, hand.bytes.length - 1), 102, ix.name);
  });

  it.each(vectors)('$name with a trailing byte is 102', (ix, hand) => {
    const longer = new Uint8Array(hand.bytes.length + 1);
    longer.set(hand.bytes);
    expectAnchorCode(longer, 102, ix.name);
  });

  it.each([
    ['ack_deposit approve', 0, 16],
    ['ack_withdraw approve', 1, 16],
    ['set_token_pair frozen', 8, 72],
  ] as const)('%s = 2 is 102', (_name, vectorIndex, offset) => {
    const [ix, hand] = vectors[vectorIndex]!;
    const bytes = new HandBytes(hand.bytes.length).put(0, hand.bytes).u8(offset, 2).bytes;
    expectAnchorCode(bytes, 102, ix.name);
  });

  it.each([4, 0xffff_ffff])('a Vec length of %i beyond the data is 102', (length) => {
    const [, hand] = vectors[4]!;
    const bytes = new HandBytes(hand.bytes.length).put(0, hand.bytes).u32(19, length).bytes;
    expectAnchorCode(bytes, 102, 'initialize_deposit_tracker');
  });

  it('a Vec declaring fewer keys than follow leaves trailing bytes: 102', () => {
    const [, hand] = vectors[4]!;
    const bytes = new HandBytes(hand.bytes.length).put(0, hand.bytes).u32(19, 2).bytes;
    expectAnchorCode(bytes, 102, 'initialize_deposit_tracker');
  });

  it('decodes more than 16 authorities (the program, not the decoder, reports 2500)', () => {
    const authorities = Array.from({ length: 17 }, (_, i) => key(i + 1));
    const data = encodeInstructionData({ name: 'initialize_withdraw_tracker', sourceChainId: 1, capacity: 1n, threshold: 1, authorities });
    expect(decodeInstructionData(data)).toMatchObject({ authorities });
  });

  it('keeps an invalid ack_withdraw result raw and ignores its reserved bytes', () => {
    const bytes = new HandBytes(33).hex(0, '8b205c923efaf7e6').u64(8, 1n).u8(16, 1).u8(17, 7).u8(18, 9).hex(19, 'ffffffffffff').u64(25, 3n).bytes;
    expect(decodeInstructionData(bytes)).toEqual({
      name: 'ack_withdraw',
      index: 1n,
      approve: true,
      result: { tag: 7, reason: 9, amount: 3n },
    });
  });
});

describe('instruction encoding guards', () => {
  it('refuses arguments that do not fit their Borsh type', () => {
    expect(() => encodeInstructionData({ name: 'cleanup_deposit', index: -1n })).toThrow(/index/);
    expect(() => encodeInstructionData({ name: 'withdraw', index: 1n << 64n })).toThrow(/index/);
    expect(() =>
      encodeInstructionData({ name: 'initialize_deposit_tracker', targetChainId: 65_536, capacity: 1n, threshold: 1, authorities: [] }),
    ).toThrow(/targetChainId/);
    expect(() => encodeInstructionData({ name: 'ack_withdraw', index: 1n, approve: true, result: { tag: 256, reason: 0, amount: 0n } })).toThrow(
      /result\.tag/,
    );
    expect(() => encodeInstructionData({ name: 'deposit', amount: 1n, recipient: key(1), sourceMint: 'not base58!' })).toThrow(/sourceMint/);
  });
});
