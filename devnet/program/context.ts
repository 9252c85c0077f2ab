import type { PublicKey } from '@solana/web3.js';
import { ProgramError } from './errors.js';
import type { AccountStore } from './store.js';

/** One account of an instruction as the transaction presents it. */
export interface InstructionAccount {
  address: string;
  /** The transaction carries this account's valid signature. */
  isSigner: boolean;
  isWritable: boolean;
}

/** Everything one bridge instruction sees: its accounts, the store, the cluster it runs on. */
export interface InstructionContext {
  programId: PublicKey;
  /** The chain id of the cluster running the program (PROTOCOL.md: each cluster knows its own). */
  chainId: number;
  slot: bigint;
  accounts: readonly InstructionAccount[];
  store: AccountStore;
  /** Appends a `Program log:` line to the transaction's logs. */
  log(message: string): void;
}

/** The instruction account at `position`, or InvalidAccount naming the missing role. */
export function accountAt(ctx: InstructionContext, position: number, role: string): InstructionAccount {
  const account = ctx.accounts[position];
  if (account === undefined) {
    throw new ProgramError('InvalidAccount', `account #${position} (${role}) is missing: the instruction lists ${ctx.accounts.length} accounts`);
  }
  return account;
}

export function signerAt(ctx: InstructionContext, position: number, role: string): InstructionAccount {
  const account = accountAt(ctx, position, role);
  if (!account.isSigner) throw new ProgramError('InvalidAccount', `${role} ${account.address} (account #${position}) did not sign`);
  return account;
}

export function writableAt(ctx: InstructionContext, position: number, role: string): InstructionAccount {
  const account = accountAt(ctx, position, role);
  if (!account.isWritable) {
    throw new ProgramError('InvalidAccount', `${role} ${account.address} (account #${position}) must be writable`);
  }
  return account;
}
