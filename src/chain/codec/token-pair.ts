import type { TokenPair } from '../types.js';
import { accountReader, checkDiscriminator, checkLength, decodeFlag } from './account-errors.js';
import { ByteWriter } from './bytes.js';
import { ACCOUNT_DISCRIMINATORS, DISCRIMINATOR_SIZE, TOKEN_PAIR_SIZE } from './layout.js';

/** TokenPair (104 bytes, PROTOCOL.md): reserved bytes are ignored on decode and written as zeros. */

export function decodeTokenPair(data: Uint8Array, account: string): TokenPair {
  checkDiscriminator(data, 'TokenPair', account);
  checkLength(data, TOKEN_PAIR_SIZE, { account, field: 'data' });
  const reader = accountReader(data.subarray(0, TOKEN_PAIR_SIZE), account, 'data');
  reader.skip(DISCRIMINATOR_SIZE);
  const sourceChainId = reader.u16();
  reader.skip(6);
  const sourceMint = reader.base58();
  const targetMint = reader.base58();
  const frozen = decodeFlag(reader.u8(), account, 'frozen');
  reader.skip(7);
  const limitRemaining = reader.u64();
  const vaultBalance = reader.u64();
  return { sourceChainId, sourceMint, targetMint, frozen, limitRemaining, vaultBalance };
}

export function encodeTokenPair(pair: TokenPair): Uint8Array {
  return new ByteWriter(TOKEN_PAIR_SIZE)
    .raw(ACCOUNT_DISCRIMINATORS.TokenPair)
    .u16(pair.sourceChainId, 'sourceChainId')
    .zeros(6)
    .base58(pair.sourceMint, 'sourceMint')
    .base58(pair.targetMint, 'targetMint')
    .bool(pair.frozen, 'frozen')
    .zeros(7)
    .u64(pair.limitRemaining, 'limitRemaining')
    .u64(pair.vaultBalance, 'vaultBalance')
    .toBytes();
}
