import bs58 from 'bs58';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteReader, ByteWriter, base58ToKeyBytes } from '../../../src/chain/codec/bytes.js';
import { atOffset, key, keyBytes } from './hand-bytes.js';

const shortRead = (offset: number, size: number, available: number): Error => new Error(`short ${offset}/${size}/${available}`);

describe('ByteReader', () => {
  it('reads little-endian integers and keys from a view at a non-zero byteOffset', () => {
    const bytes = atOffset(Uint8Array.from([0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, ...keyBytes(5)]));
    const reader = new ByteReader(bytes, shortRead);
    expect(reader.u8()).toBe(0x01);
    expect(reader.u16()).toBe(0x0302);
    expect(reader.u32()).toBe(0x0706_0504);
    reader.skip(2);
    expect(reader.base58()).toBe(key(5));
    expect(reader.remaining).toBe(0);
  });

  it('reads a key as the base58 text bs58 gives it, leading zero bytes and extremes included', () => {
    const readKey = (bytes: Uint8Array, skip = 0) => {
      const reader = new ByteReader(Uint8Array.from([...new Uint8Array(skip).fill(7), ...bytes]), shortRead);
      reader.skip(skip);
      return reader.base58();
    };
    const edges = [
      new Uint8Array(32),
      new Uint8Array(32).fill(0xff),
      Uint8Array.from({ length: 32 }, (_, i) => (i === 31 ? 1 : 0)),
      Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 1 : 0)),
    ];
    for (const bytes of edges) expect(readKey(bytes)).toBe(bs58.encode(bytes));
    const leadingZeros = fc
      .tuple(fc.integer({ min: 0, max: 32 }), fc.uint8Array({ minLength: 32, maxLength: 32 }))
      .map(([zeros, bytes]) => bytes.fill(0, 0, zeros));
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ minLength: 32, maxLength: 32 }), leadingZeros), fc.integer({ min: 0, max: 40 }), (bytes, skip) => {
        expect(readKey(bytes, skip)).toBe(bs58.encode(bytes));
      }),
      { numRuns: 2_000 },
    );
  });

  it('reads u64 up to 2^64-1 as bigint', () => {
    const reader = new ByteReader(new Uint8Array(8).fill(0xff), shortRead);
    expect(reader.u64()).toBe((1n << 64n) - 1n);
  });

  it('reports a short read through the caller-provided error, without moving', () => {
    const reader = new ByteReader(new Uint8Array(5), shortRead);
    reader.u8();
    expect(() => reader.u64()).toThrow('short 1/8/4');
    expect(reader.offset).toBe(1);
  });
});

describe('ByteWriter', () => {
  it('grows past its initial capacity without losing earlier bytes', () => {
    const writer = new ByteWriter(2);
    for (let i = 0; i < 40; i += 1) writer.u8(i, 'b').u16(i, 'h').u64(BigInt(i), 'q').raw(keyBytes(i));
    const bytes = writer.toBytes();
    expect(bytes).toHaveLength(40 * 43);
    const reader = new ByteReader(bytes, shortRead);
    for (let i = 0; i < 40; i += 1) {
      expect([reader.u8(), reader.u16(), reader.u64(), reader.base58()]).toEqual([i, i, BigInt(i), key(i)]);
    }
  });

  it.each([
    ['u8 256', (w: ByteWriter) => w.u8(256, 'f')],
    ['u8 -1', (w: ByteWriter) => w.u8(-1, 'f')],
    ['u8 1.5', (w: ByteWriter) => w.u8(1.5, 'f')],
    ['u16 65536', (w: ByteWriter) => w.u16(65_536, 'f')],
    ['u32 2^32', (w: ByteWriter) => w.u32(2 ** 32, 'f')],
    ['u64 2^64', (w: ByteWriter) => w.u64(1n << 64n, 'f')],
    ['u64 -1', (w: ByteWriter) => w.u64(-1n, 'f')],
    ['bool as number', (w: ByteWriter) => w.bool(1 as unknown as boolean, 'f')],
  ])('refuses %s with a RangeError naming the field', (_name, write) => {
    expect(() => write(new ByteWriter())).toThrow(RangeError);
    expect(() => write(new ByteWriter())).toThrow(/^f /);
  });
});

describe('base58ToKeyBytes', () => {
  it('accepts exactly 32 bytes, including leading zero bytes', () => {
    expect(base58ToKeyBytes(key(0), 'k')).toEqual(new Uint8Array(32));
    expect(base58ToKeyBytes(key(0xff), 'k')).toEqual(keyBytes(0xff));
  });

  it('refuses other lengths and non-base58 text, naming the field', () => {
    expect(() => base58ToKeyBytes(`1${key(0)}`, 'recipient')).toThrow(/recipient must decode to 32 bytes/);
    expect(() => base58ToKeyBytes('', 'recipient')).toThrow(/recipient/);
    expect(() => base58ToKeyBytes('0OIl', 'recipient')).toThrow(/recipient is not valid base58/);
  });
});
