import { ComputeBudgetProgram, TransactionInstruction } from '@solana/web3.js';

/**
 * ComputeBudget's SetLoadedAccountsDataSizeLimit (variant 4, a u32 LE of bytes), which web3.js
 * v1 does not build: the most account data, 64 bytes per account included, the transaction may
 * load (PROTOCOL.md "Compute units and fees").
 */

const SET_LOADED_ACCOUNTS_DATA_SIZE_LIMIT = 4;

/** Agave's TRANSACTION_ACCOUNT_BASE_SIZE (SIMD-0186): what each loaded account counts besides its data. */
export const TRANSACTION_ACCOUNT_BASE_SIZE = 64;

/** Agave's MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES: the limit without the instruction, and the most it sets. */
export const MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES = 64 * 1024 * 1024;

export function setLoadedAccountsDataSizeLimitInstruction(bytes: number): TransactionInstruction {
  if (!Number.isInteger(bytes) || bytes < 0 || bytes > 0xffff_ffff) throw new RangeError(`a loaded-accounts data-size limit is a u32, got ${bytes}`);
  const data = Buffer.alloc(5);
  data.writeUInt8(SET_LOADED_ACCOUNTS_DATA_SIZE_LIMIT, 0);
  data.writeUInt32LE(bytes, 1);
  return new TransactionInstruction({ programId: ComputeBudgetProgram.programId, keys: [], data });
}
