import type { InstructionAccount } from '../program/context.js';
import { SYSTEM_PROGRAM_ID, type Account, type AccountStore } from '../program/store.js';
import type { InstructionErrorDetail } from './transaction-error.js';

/**
 * One System instruction's view of the transaction, and what Agave's BorrowedAccount lets the
 * System program do to an account (set_lamports, set_data, set_owner), checked in its order.
 */

export interface SystemCall {
  store: AccountStore;
  accounts: readonly InstructionAccount[];
  /** The instruction's signers (InstructionContext::get_signers). */
  signers: ReadonlySet<string>;
  /** The bank's latest blockhash: what a nonce initialized or advanced now takes its value from. */
  blockhash: string;
  log(line: string): void;
}

/** Thrown inside an instruction, returned by the dispatcher as the instruction's error. */
export class SystemFailure extends Error {
  constructor(readonly detail: InstructionErrorDetail) {
    super(typeof detail === 'string' ? detail : `Custom(${detail.Custom})`);
  }
}

export function fail(call: SystemCall, detail: InstructionErrorDetail, line?: string): never {
  if (line !== undefined) call.log(line);
  throw new SystemFailure(detail);
}

/** The instruction's account at `position` (NotEnoughAccountKeys when it lists fewer). */
export function accountAt(call: SystemCall, position: number): InstructionAccount {
  return call.accounts[position] ?? fail(call, 'NotEnoughAccountKeys');
}

/** check_sysvar_account: the account at `position` must be the sysvar `id`. */
export function checkSysvar(call: SystemCall, position: number, id: string): void {
  if (accountAt(call, position).address !== id) fail(call, 'InvalidArgument');
}

/** An address without an account reads as an empty account of the System program. */
export function loaded(call: SystemCall, account: InstructionAccount): Readonly<Account> {
  return call.store.get(account.address) ?? { lamports: 0n, owner: SYSTEM_PROGRAM_ID, data: new Uint8Array(0), executable: false };
}

/** BorrowedAccount::set_lamports. */
export function setLamports(call: SystemCall, account: InstructionAccount, lamports: bigint): void {
  const current = loaded(call, account);
  if (current.owner !== SYSTEM_PROGRAM_ID && lamports < current.lamports) fail(call, 'ExternalAccountLamportSpend');
  if (!account.isWritable) fail(call, 'ReadonlyLamportChange');
  if (current.executable) fail(call, 'ExecutableLamportChange');
  if (lamports === current.lamports) return;
  if (call.store.get(account.address) === undefined) {
    call.store.create(account.address, { lamports, owner: SYSTEM_PROGRAM_ID, data: new Uint8Array(0), executable: false });
  } else {
    call.store.setLamports(account.address, lamports);
  }
}

/** BorrowedAccount::can_data_be_changed. */
export function checkDataWritable(call: SystemCall, account: InstructionAccount): void {
  const current = loaded(call, account);
  if (current.executable) fail(call, 'ExecutableDataModified');
  if (!account.isWritable) fail(call, 'ReadonlyDataModified');
  if (current.owner !== SYSTEM_PROGRAM_ID) fail(call, 'ExternalAccountDataModified');
}

/** BorrowedAccount::set_state: serialized bytes over the front of the data, which must hold them. */
export function setState(call: SystemCall, account: InstructionAccount, bytes: Uint8Array): void {
  checkDataWritable(call, account);
  if (bytes.length > loaded(call, account).data.length) fail(call, 'AccountDataTooSmall');
  call.store.writeData(account.address, 0, bytes);
}
