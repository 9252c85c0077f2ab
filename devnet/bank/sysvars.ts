import bs58 from 'bs58';
import { rentExemptMinimum, type Account } from '../program/store.js';

/**
 * The sysvar accounts the System program's nonce instructions name, as a node serves them:
 * owned by the Sysvar program, funded at their rent-exempt minimum. RecentBlockhashes (deprecated
 * on clusters, still kept) holds the newest 150 blockhashes, newest first, each with the
 * lamports per signature of its time, in an account of a fixed 6,008 bytes; Rent holds the rent
 * the devnet charges (store.ts).
 */

const SYSVAR_OWNER_ID = 'Sysvar1111111111111111111111111111111111111';
export const RECENT_BLOCKHASHES_SYSVAR_ID = 'SysvarRecentB1ockHashes11111111111111111111';
export const RENT_SYSVAR_ID = 'SysvarRent111111111111111111111111111111111';

/** How many blockhashes the sysvar lists (MAX_ENTRIES). */
const RECENT_BLOCKHASHES_MAX_ENTRIES = 150;
// bincode of Vec<(Hash, FeeCalculator)>: a u64 length, then 40 bytes an entry.
const ENTRY_SIZE = 32 + 8;
const RECENT_BLOCKHASHES_SIZE = 8 + RECENT_BLOCKHASHES_MAX_ENTRIES * ENTRY_SIZE;

const LAMPORTS_PER_BYTE_YEAR = 3_480n;
const EXEMPTION_THRESHOLD_YEARS = 2;
const BURN_PERCENT = 50;

function sysvarAccount(data: Uint8Array): Account {
  return { lamports: rentExemptMinimum(data.length), owner: SYSVAR_OWNER_ID, data, executable: false };
}

/** The Rent sysvar: u64 lamports per byte-year, f64 exemption threshold (years), u8 burn percent. */
export function rentSysvarAccount(): Account {
  const data = Buffer.alloc(17);
  data.writeBigUInt64LE(LAMPORTS_PER_BYTE_YEAR, 0);
  data.writeDoubleLE(EXEMPTION_THRESHOLD_YEARS, 8);
  data.writeUInt8(BURN_PERCENT, 16);
  return sysvarAccount(new Uint8Array(data));
}

/** The RecentBlockhashes sysvar listing `newestFirst` (at most 150 are kept). */
export function recentBlockhashesSysvarAccount(newestFirst: readonly string[], lamportsPerSignature: bigint): Account {
  const entries = newestFirst.slice(0, RECENT_BLOCKHASHES_MAX_ENTRIES);
  const data = Buffer.alloc(RECENT_BLOCKHASHES_SIZE);
  data.writeBigUInt64LE(BigInt(entries.length), 0);
  entries.forEach((blockhash, i) => {
    const at = 8 + i * ENTRY_SIZE;
    data.set(bs58.decode(blockhash), at);
    data.writeBigUInt64LE(lamportsPerSignature, at + 32);
  });
  return sysvarAccount(new Uint8Array(data));
}
