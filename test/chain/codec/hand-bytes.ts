import { createHash } from 'node:crypto';
import bs58 from 'bs58';

/**
 * Test-only byte building at the offsets PROTOCOL.md's tables give, independent of the codecs
 * under test: expected vectors are written field by field with a DataView.
 */
export class HandBytes {
  readonly bytes: Uint8Array;
  readonly #view: DataView;

  constructor(size: number) {
    this.bytes = new Uint8Array(size);
    this.#view = new DataView(this.bytes.buffer);
  }

  u8(offset: number, value: number): this {
    this.#view.setUint8(offset, value);
    return this;
  }

  u16(offset: number, value: number): this {
    this.#view.setUint16(offset, value, true);
    return this;
  }

  u32(offset: number, value: number): this {
    this.#view.setUint32(offset, value, true);
    return this;
  }

  u64(offset: number, value: bigint): this {
    this.#view.setBigUint64(offset, value, true);
    return this;
  }

  put(offset: number, bytes: Uint8Array): this {
    this.bytes.set(bytes, offset);
    return this;
  }

  hex(offset: number, hex: string): this {
    return this.put(offset, Buffer.from(hex, 'hex'));
  }
}

/** 32 bytes, every byte `fill` (distinct, recognisable keys). */
export function keyBytes(fill: number): Uint8Array {
  return new Uint8Array(32).fill(fill);
}

export function key(fill: number): string {
  return bs58.encode(keyBytes(fill));
}

export function sha256Prefix(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/** A fresh copy of `bytes` at a non-zero byteOffset inside a larger buffer, like web3.js's pooled Buffers. */
export function atOffset(bytes: Uint8Array): Uint8Array {
  const backing = new Uint8Array(bytes.length + 13);
  backing.set(bytes, 7);
  return backing.subarray(7, 7 + bytes.length);
}

export const ACCOUNT = 'Acct111111111111111111111111111111111111111';
