import {
  CURRENT_NONCE_VERSION,
  decodeNonceState,
  durableNonceOf,
  encodeNonceState,
  type InitializedNonce,
  type NonceState,
} from '../../src/chain/codec/nonce-state.js';
import type { InstructionAccount } from '../program/context.js';
import { SYSTEM_PROGRAM_ID, rentExemptMinimum, type Account } from '../program/store.js';
import { LAMPORTS_PER_SIGNATURE } from './compute-budget.js';
import { accountAt, checkSysvar, fail, loaded, setLamports, setState, type SystemCall } from './system-call.js';
import { RECENT_BLOCKHASHES_SYSVAR_ID, RENT_SYSVAR_ID } from './sysvars.js';
import type { DevnetTransaction } from './transaction.js';

/**
 * Durable nonces as Agave runs them (PROTOCOL.md "Durable nonces"): the account's state
 * (bincode of nonce::state::Versions, 80 bytes), the four nonce instructions of the System
 * program, and what makes a transaction a durable-nonce one.
 */

export const ADVANCE_NONCE_ACCOUNT = 4;
// SystemError: the nonce was already advanced to this blockhash's value.
const NONCE_BLOCKHASH_NOT_EXPIRED = 7;

/** The state a nonce initialized or advanced while `blockhash` is the latest holds. */
function advancedNonce(authority: string, blockhash: string): InitializedNonce {
  return {
    version: CURRENT_NONCE_VERSION,
    state: 'initialized',
    authority,
    durableNonce: durableNonceOf(blockhash),
    lamportsPerSignature: BigInt(LAMPORTS_PER_SIGNATURE),
  };
}

/**
 * A durable-nonce transaction that failed still advances its nonce, as Agave commits it with the
 * fee (PROTOCOL.md "Durable nonces"): no other version signed against the old value lands. The
 * nonce account at `address` as it is then, advanced while `blockhash` is the latest.
 */
export function nonceAdvancedAfterFailure(address: string, account: Readonly<Account>, blockhash: string): Account {
  const state = decodeNonceState(account.data);
  if (state?.state !== 'initialized') throw new Error(`nonce account ${address} was verified before the transaction but holds no nonce now`);
  const data = account.data.slice();
  data.set(encodeNonceState(advancedNonce(state.authority, blockhash)), 0);
  return { ...account, data };
}

/**
 * A durable-nonce transaction (Bank::check_load_and_advance_message_nonce_account): its first
 * instruction is AdvanceNonceAccount on a writable account that holds, as a current-version
 * initialized System nonce, the transaction's recent blockhash; the nonce's authority signs that
 * instruction; and the nonce is not already the value it would advance to now. The nonce
 * account's address, or undefined.
 */
export function durableNonceAccount(
  tx: DevnetTransaction,
  get: (address: string) => Readonly<Account> | undefined,
  latestBlockhash: string,
): string | undefined {
  const first = tx.instructions[0];
  if (first === undefined || tx.accountKeys[first.programIdIndex] !== SYSTEM_PROGRAM_ID) return undefined;
  if (first.data.length < 4 || new DataView(first.data.buffer, first.data.byteOffset, 4).getUint32(0, true) !== ADVANCE_NONCE_ACCOUNT)
    return undefined;
  const index = first.accountIndexes[0];
  if (index === undefined || tx.writable[index] !== true) return undefined;
  const address = tx.accountKeys[index]!;
  const authority = nonceAuthorityFor(get(address), tx.recentBlockhash);
  const signs = first.accountIndexes.some((i) => i < tx.signerCount && tx.accountKeys[i] === authority);
  // Last, as the dearest check (a hash): a nonce already advanced to this blockhash's value cannot advance again.
  return signs && tx.recentBlockhash !== durableNonceOf(latestBlockhash) ? address : undefined;
}

/**
 * verify_nonce_account: the account is the System program's, holds a current-version
 * initialized nonce equal to `value`; its authority, or undefined.
 */
function nonceAuthorityFor(account: Readonly<Account> | undefined, value: string): string | undefined {
  if (account === undefined || account.owner !== SYSTEM_PROGRAM_ID) return undefined;
  const state = decodeNonceState(account.data);
  if (state?.state !== 'initialized' || state.version !== CURRENT_NONCE_VERSION || state.durableNonce !== value) return undefined;
  return state.authority;
}

function stateOf(call: SystemCall, account: InstructionAccount): NonceState {
  return decodeNonceState(loaded(call, account).data) ?? fail(call, 'InvalidAccountData');
}

function writableNonce(call: SystemCall, what: string): InstructionAccount {
  const nonce = accountAt(call, 0);
  if (!nonce.isWritable) fail(call, 'InvalidArgument', `${what} nonce account: Account ${nonce.address} must be writeable`);
  return nonce;
}

function checkRecentBlockhashes(call: SystemCall, position: number): void {
  // The devnet's RecentBlockhashes always lists the latest blockhash: never NonceNoRecentBlockhashes.
  checkSysvar(call, position, RECENT_BLOCKHASHES_SYSVAR_ID);
}

/** AdvanceNonceAccount (4): accounts nonce (w), RecentBlockhashes; the authority signs. */
export function advanceNonceAccount(call: SystemCall): void {
  accountAt(call, 0);
  checkRecentBlockhashes(call, 1);
  const nonce = writableNonce(call, 'Advance');
  const state = stateOf(call, nonce);
  if (state.state === 'uninitialized') fail(call, 'InvalidAccountData', `Advance nonce account: Account ${nonce.address} state is invalid`);
  if (!call.signers.has(state.authority))
    fail(call, 'MissingRequiredSignature', `Advance nonce account: Account ${state.authority} must be a signer`);
  const next = advancedNonce(state.authority, call.blockhash);
  if (next.durableNonce === state.durableNonce) {
    fail(call, { Custom: NONCE_BLOCKHASH_NOT_EXPIRED }, 'Advance nonce account: nonce can only advance once per slot');
  }
  setState(call, nonce, encodeNonceState(next));
}

/** InitializeNonceAccount (6, the authority): accounts nonce (w), RecentBlockhashes, Rent. */
export function initializeNonceAccount(call: SystemCall, authority: string): void {
  accountAt(call, 0);
  checkRecentBlockhashes(call, 1);
  checkSysvar(call, 2, RENT_SYSVAR_ID);
  const nonce = writableNonce(call, 'Initialize');
  const current = loaded(call, nonce);
  if (stateOf(call, nonce).state === 'initialized')
    fail(call, 'InvalidAccountData', `Initialize nonce account: Account ${nonce.address} state is invalid`);
  const minimum = rentExemptMinimum(current.data.length);
  if (current.lamports < minimum) {
    fail(call, 'InsufficientFunds', `Initialize nonce account: insufficient lamports ${current.lamports}, need ${minimum}`);
  }
  setState(call, nonce, encodeNonceState(advancedNonce(authority, call.blockhash)));
}

/** WithdrawNonceAccount (5, lamports): accounts nonce (w), to (w), RecentBlockhashes, Rent; the authority signs. */
export function withdrawNonceAccount(call: SystemCall, lamports: bigint): void {
  accountAt(call, 1);
  checkRecentBlockhashes(call, 2);
  checkSysvar(call, 3, RENT_SYSVAR_ID);
  const nonce = writableNonce(call, 'Withdraw');
  const current = loaded(call, nonce);
  const state = stateOf(call, nonce);
  let signer = nonce.address;
  if (state.state === 'uninitialized') {
    if (lamports > current.lamports)
      fail(call, 'InsufficientFunds', `Withdraw nonce account: insufficient lamports ${current.lamports}, need ${lamports}`);
  } else if (lamports === current.lamports) {
    if (state.durableNonce === durableNonceOf(call.blockhash)) {
      fail(call, { Custom: NONCE_BLOCKHASH_NOT_EXPIRED }, 'Withdraw nonce account: nonce can only advance once per slot');
    }
    setState(call, nonce, encodeNonceState({ version: CURRENT_NONCE_VERSION, state: 'uninitialized' }));
    signer = state.authority;
  } else {
    const needed = lamports + rentExemptMinimum(current.data.length);
    if (needed > current.lamports)
      fail(call, 'InsufficientFunds', `Withdraw nonce account: insufficient lamports ${current.lamports}, need ${needed}`);
    signer = state.authority;
  }
  if (!call.signers.has(signer)) fail(call, 'MissingRequiredSignature', `Withdraw nonce account: Account ${signer} must sign`);
  setLamports(call, nonce, loaded(call, nonce).lamports - lamports);
  const to = call.accounts[1]!;
  setLamports(call, to, loaded(call, to).lamports + lamports);
}

/** AuthorizeNonceAccount (7, the new authority): account nonce (w); the current authority signs. */
export function authorizeNonceAccount(call: SystemCall, newAuthority: string): void {
  const nonce = writableNonce(call, 'Authorize');
  const state = stateOf(call, nonce);
  if (state.state === 'uninitialized') fail(call, 'InvalidAccountData', `Authorize nonce account: Account ${nonce.address} state is invalid`);
  if (!call.signers.has(state.authority)) fail(call, 'MissingRequiredSignature', `Authorize nonce account: Account ${state.authority} must sign`);
  setState(call, nonce, encodeNonceState({ ...state, authority: newAuthority }));
}
