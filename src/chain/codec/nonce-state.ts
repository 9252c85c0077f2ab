import { createHash } from 'node:crypto';
import bs58 from 'bs58';

/**
 * A System nonce account's state, the bincode of Agave's nonce::state::Versions (PROTOCOL.md
 * "Durable nonces"): u32 version, u32 state, then for an initialized nonce the authority, the
 * durable nonce and the lamports per signature, 80 bytes in all. The server reads its own pool
 * with it and the devnet keeps its accounts in it.
 */

export const NONCE_ACCOUNT_SIZE = 80;
export const CURRENT_NONCE_VERSION = 1;
const INITIALIZED = 1;

export type InitializedNonce = { version: number; state: 'initialized'; authority: string; durableNonce: string; lamportsPerSignature: bigint };
export type NonceState = { version: number; state: 'uninitialized' } | InitializedNonce;

/** As Agave decodes it (trailing bytes allowed); undefined where its get_state fails (InvalidAccountData). */
export function decodeNonceState(data: Uint8Array): NonceState | undefined {
  if (data.length < 8) return undefined;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const version = view.getUint32(0, true);
  const state = view.getUint32(4, true);
  if (version > CURRENT_NONCE_VERSION || state > INITIALIZED) return undefined;
  if (state === 0) return { version, state: 'uninitialized' };
  if (data.length < NONCE_ACCOUNT_SIZE) return undefined;
  return {
    version,
    state: 'initialized',
    authority: bs58.encode(data.subarray(8, 40)),
    durableNonce: bs58.encode(data.subarray(40, 72)),
    lamportsPerSignature: view.getBigUint64(72, true),
  };
}

export function encodeNonceState(state: NonceState): Uint8Array {
  const bytes = Buffer.alloc(state.state === 'uninitialized' ? 8 : NONCE_ACCOUNT_SIZE);
  bytes.writeUInt32LE(state.version, 0);
  if (state.state === 'uninitialized') return new Uint8Array(bytes);
  bytes.writeUInt32LE(INITIALIZED, 4);
  bytes.set(bs58.decode(state.authority), 8);
  bytes.set(bs58.decode(state.durableNonce), 40);
  bytes.writeBigUInt64LE(state.lamportsPerSignature, 72);
  return new Uint8Array(bytes);
}

/**
 * The value a nonce account holds once advanced in the block whose blockhash is `blockhash`:
 * Agave's DurableNonce::from_blockhash, sha256("DURABLE_NONCE" || blockhash). A value derived
 * from a recent blockhash was made within its 150 blocks; a forged one derives from none.
 */
export function durableNonceOf(blockhash: string): string {
  return bs58.encode(createHash('sha256').update('DURABLE_NONCE').update(bs58.decode(blockhash)).digest());
}
