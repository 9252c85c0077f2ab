import { PublicKey } from '@solana/web3.js';

/**
 * Program-derived addresses of PROTOCOL.md: "deposit_tracker" + u16le(T),
 * "withdraw_tracker" + u16le(S), "token_pair" + u16le(S) + source_mint.
 *
 * findProgramAddressSync costs about 0.25 ms (hashing plus an on-curve check per bump tried)
 * and the crank derives these every cycle, so results are memoized. The memo is bounded
 * because token-pair mints come from user deposits: oldest entries are evicted first.
 */

const MAX_MEMO_ENTRIES = 512;
const memo = new Map<string, PublicKey>();

export function depositTrackerAddress(programId: PublicKey, targetChainId: number): PublicKey {
  return programAddress(programId, [Buffer.from('deposit_tracker'), chainIdSeed(targetChainId, 'targetChainId')]);
}

export function withdrawTrackerAddress(programId: PublicKey, sourceChainId: number): PublicKey {
  return programAddress(programId, [Buffer.from('withdraw_tracker'), chainIdSeed(sourceChainId, 'sourceChainId')]);
}

export function tokenPairAddress(programId: PublicKey, sourceChainId: number, sourceMint: PublicKey): PublicKey {
  return programAddress(programId, [Buffer.from('token_pair'), chainIdSeed(sourceChainId, 'sourceChainId'), sourceMint.toBuffer()]);
}

function chainIdSeed(chainId: number, field: string): Buffer {
  if (!Number.isInteger(chainId) || chainId < 0 || chainId > 0xffff) {
    throw new RangeError(`${field} must be a u16 chain id (0 ..= 65535), got ${String(chainId)}`);
  }
  const seed = Buffer.alloc(2);
  seed.writeUInt16LE(chainId);
  return seed;
}

function programAddress(programId: PublicKey, seeds: Buffer[]): PublicKey {
  const key = `${programId.toBase58()}:${seeds.map((seed) => seed.toString('hex')).join(':')}`;
  const known = memo.get(key);
  if (known !== undefined) return known;
  const [address] = PublicKey.findProgramAddressSync(seeds, programId);
  if (memo.size >= MAX_MEMO_ENTRIES) memo.delete(memo.keys().next().value as string);
  memo.set(key, address);
  return address;
}
