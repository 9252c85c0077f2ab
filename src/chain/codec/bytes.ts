import bs58 from 'bs58';
import type { Base58 } from '../types.js';

/**
 * Little-endian byte reading and writing shared by every codec (accounts and instructions).
 * Readers never throw a bare RangeError: the caller decides which typed error a short read is.
 */

export const KEY_SIZE = 32;
const U64_MAX = (1n << 64n) - 1n;

/** Builds the error thrown when a read needs `size` bytes at `offset` and fewer remain. */
export type ShortReadError = (offset: number, size: number, available: number) => Error;

export class ByteReader {
  readonly #bytes: Uint8Array;
  readonly #view: DataView;
  readonly #onShortRead: ShortReadError;
  #offset = 0;

  constructor(bytes: Uint8Array, onShortRead: ShortReadError) {
    this.#bytes = bytes;
    // Buffers from web3.js are views into a shared pool: honour byteOffset.
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#onShortRead = onShortRead;
  }

  get offset(): number {
    return this.#offset;
  }

  get remaining(): number {
    return this.#bytes.length - this.#offset;
  }

  u8(): number {
    return this.#view.getUint8(this.#advance(1));
  }

  u16(): number {
    return this.#view.getUint16(this.#advance(2), true);
  }

  u32(): number {
    return this.#view.getUint32(this.#advance(4), true);
  }

  u64(): bigint {
    return this.#view.getBigUint64(this.#advance(8), true);
  }

  /** A view (not a copy) of the next `size` bytes. */
  bytes(size: number): Uint8Array {
    const start = this.#advance(size);
    return this.#bytes.subarray(start, start + size);
  }

  /** A 32-byte key or address as base58. */
  base58(): Base58 {
    return keyToBase58(this.#bytes, this.#advance(KEY_SIZE));
  }

  skip(size: number): void {
    this.#advance(size);
  }

  #advance(size: number): number {
    const start = this.#offset;
    if (size > this.remaining) throw this.#onShortRead(start, size, this.remaining);
    this.#offset = start + size;
    return start;
  }
}

const BASE58_CODES = Buffer.from('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 'latin1');
const BASE58_ZERO = BASE58_CODES[0]!;
/** Three digits per division: a remainder below 58^3 times 2^32, plus a word, stays below 2^53. */
const THREE_DIGITS = 58 ** 3;
const WORD = 2 ** 32;
/** Digits the divisions produce for a 32-byte key, leading zeros included: 15 rounds of 3 (58^45 > 2^256). */
const KEY_DIGITS = 45;
/**
 * keyToBase58's working memory, reused by every call: the function is synchronous and calls
 * nothing that could call it again, so no two calls ever share it.
 */
const keyWords = new Float64Array(KEY_SIZE / 4);
const keyDigits = Buffer.alloc(KEY_DIGITS);

/**
 * The 32-byte key at `bytes[start..]` in base58, the same text as bs58.encode, about 4 times
 * faster and allocating only the string (bs58 allocates about 1.5 KB per key, appending one
 * character at a time): a 500-transfer read decodes 3,000 keys. The key is 8 big-endian 32-bit
 * words, divided by 58^3 until nothing is left; each leading zero byte is a leading '1'.
 */
function keyToBase58(bytes: Uint8Array, start: number): Base58 {
  for (let word = 0; word < keyWords.length; word++) {
    const at = start + word * 4;
    keyWords[word] = bytes[at]! * 0x100_0000 + ((bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!);
  }
  let digit = KEY_DIGITS;
  let first = 0;
  while (first < keyWords.length && keyWords[first] === 0) first++;
  while (first < keyWords.length) {
    let remainder = 0;
    for (let word = first; word < keyWords.length; word++) {
      const value = remainder * WORD + keyWords[word]!;
      const quotient = Math.floor(value / THREE_DIGITS);
      remainder = value - quotient * THREE_DIGITS;
      keyWords[word] = quotient;
    }
    while (first < keyWords.length && keyWords[first] === 0) first++;
    for (let k = 0; k < 3; k++) {
      const quotient = Math.floor(remainder / 58);
      keyDigits[--digit] = BASE58_CODES[remainder - quotient * 58]!;
      remainder = quotient;
    }
  }
  while (digit < KEY_DIGITS && keyDigits[digit] === BASE58_ZERO) digit++;
  for (let at = start; at < start + KEY_SIZE && bytes[at] === 0; at++) keyDigits[--digit] = BASE58_ZERO;
  return keyDigits.toString('latin1', digit, KEY_DIGITS);
}

/**
 * Appends little-endian values to a growing buffer. Values outside their type's range are a
 * programming error in the caller: they throw a RangeError naming the field instead of wrapping.
 */
export class ByteWriter {
  #bytes: Uint8Array;
  #view: DataView;
  #length = 0;

  constructor(initialCapacity = 64) {
    this.#bytes = new Uint8Array(initialCapacity);
    this.#view = new DataView(this.#bytes.buffer);
  }

  get length(): number {
    return this.#length;
  }

  // Each write reserves first: reserving may replace #bytes and #view.

  u8(value: number, field: string): this {
    checkInteger(value, 0xff, field);
    const at = this.#reserve(1);
    this.#view.setUint8(at, value);
    return this;
  }

  u16(value: number, field: string): this {
    checkInteger(value, 0xffff, field);
    const at = this.#reserve(2);
    this.#view.setUint16(at, value, true);
    return this;
  }

  u32(value: number, field: string): this {
    checkInteger(value, 0xffff_ffff, field);
    const at = this.#reserve(4);
    this.#view.setUint32(at, value, true);
    return this;
  }

  u64(value: bigint, field: string): this {
    if (typeof value !== 'bigint' || value < 0n || value > U64_MAX) {
      throw new RangeError(`${field} must be a u64 bigint (0 ..= 2^64-1), got ${String(value)}`);
    }
    const at = this.#reserve(8);
    this.#view.setBigUint64(at, value, true);
    return this;
  }

  bool(value: boolean, field: string): this {
    if (typeof value !== 'boolean') throw new RangeError(`${field} must be a boolean, got ${String(value)}`);
    return this.u8(value ? 1 : 0, field);
  }

  raw(bytes: Uint8Array): this {
    const at = this.#reserve(bytes.length);
    this.#bytes.set(bytes, at);
    return this;
  }

  /** A 32-byte key or address given as base58. */
  base58(value: Base58, field: string): this {
    return this.raw(base58ToKeyBytes(value, field));
  }

  /** Reserved or unused bytes: always written as zeros. */
  zeros(size: number): this {
    this.#reserve(size);
    return this;
  }

  toBytes(): Uint8Array {
    return this.#bytes.slice(0, this.#length);
  }

  #reserve(size: number): number {
    const start = this.#length;
    if (start + size > this.#bytes.length) this.#grow(start + size);
    this.#length = start + size;
    return start;
  }

  #grow(minimum: number): void {
    const next = new Uint8Array(Math.max(minimum, this.#bytes.length * 2));
    next.set(this.#bytes.subarray(0, this.#length));
    this.#bytes = next;
    this.#view = new DataView(next.buffer);
  }
}

function checkInteger(value: number, max: number, field: string): void {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new RangeError(`${field} must be an integer in 0 ..= ${max}, got ${String(value)}`);
  }
}

/** Decodes a base58 string that must stand for exactly 32 bytes (a Pubkey or a `[u8; 32]`). */
export function base58ToKeyBytes(value: Base58, field: string): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(value);
  } catch (cause) {
    throw new RangeError(`${field} is not valid base58: ${JSON.stringify(value)}`, { cause });
  }
  if (bytes.length !== KEY_SIZE) {
    throw new RangeError(`${field} must decode to ${KEY_SIZE} bytes, got ${bytes.length} from ${JSON.stringify(value)}`);
  }
  return bytes;
}

export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  return a.every((byte, i) => byte === b[i]);
}
