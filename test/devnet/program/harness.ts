import { Keypair, PublicKey } from '@solana/web3.js';
import { expect } from 'vitest';
import { decodeDepositEntry, decodeTokenPair, decodeTrackerHeader, decodeWithdrawEntry } from '../../../src/chain/codec/accounts.js';
import { encodeInstructionData, type BridgeInstruction, type DepositResultArg } from '../../../src/chain/codec/instructions.js';
import { DEFAULT_PROGRAM_ID, entryOffset, entrySize } from '../../../src/chain/codec/layout.js';
import { depositTrackerAddress, tokenPairAddress, withdrawTrackerAddress } from '../../../src/chain/pda.js';
import type { FrameworkErrorName, ProgramErrorName } from '../../../src/chain/program-errors.js';
import type { DepositEntry, TokenPair, TrackerHeader, TrackerKind, WithdrawEntry } from '../../../src/chain/types.js';
import type { InstructionAccount } from '../../../devnet/program/context.js';
import { ProgramError } from '../../../devnet/program/errors.js';
import { executeBridgeInstruction } from '../../../devnet/program/program.js';
import { AccountJournal, type Account } from '../../../devnet/program/store.js';

/**
 * The bridge program over an in-memory account store, one per chain, with no bank and no HTTP.
 * `run` is atomic like a transaction: a failing instruction leaves the store unchanged.
 */

export const PROGRAM_ID = new PublicKey(DEFAULT_PROGRAM_ID);
export const SOURCE_CHAIN_ID = 1;
export const TARGET_CHAIN_ID = 2;

export const signer = (key: PublicKey): InstructionAccount => ({ address: key.toBase58(), isSigner: true, isWritable: true });
export const writable = (key: PublicKey): InstructionAccount => ({ address: key.toBase58(), isSigner: false, isWritable: true });
export const readonly = (key: PublicKey): InstructionAccount => ({ address: key.toBase58(), isSigner: false, isWritable: false });

export class ProgramChain {
  readonly accounts = new Map<string, Account>();
  readonly logs: string[] = [];
  slot = 100n;

  constructor(readonly chainId: number) {}

  run(ix: BridgeInstruction | Uint8Array, metas: InstructionAccount[]): void {
    const journal = new AccountJournal(this.accounts);
    const data = ix instanceof Uint8Array ? ix : encodeInstructionData(ix);
    try {
      executeBridgeInstruction(
        { programId: PROGRAM_ID, chainId: this.chainId, slot: this.slot, accounts: metas, store: journal, log: (line) => this.logs.push(line) },
        data,
      );
      journal.commit();
    } catch (err) {
      journal.rollback();
      throw err;
    }
  }

  data(address: PublicKey): Uint8Array {
    const account = this.accounts.get(address.toBase58());
    if (account === undefined) throw new Error(`test: account ${address.toBase58()} does not exist`);
    return account.data;
  }

  /** A deep copy of every account, to assert that a failed instruction changed nothing. */
  snapshot(): Map<string, { lamports: bigint; owner: string; data: string }> {
    return new Map([...this.accounts].map(([key, a]) => [key, { lamports: a.lamports, owner: a.owner, data: Buffer.from(a.data).toString('hex') }]));
  }
}

/** Runs `act` and checks it fails with `name` (and its code) and leaves the chain unchanged. */
export function expectProgramError(chain: ProgramChain, name: ProgramErrorName | FrameworkErrorName, act: () => void): ProgramError {
  const before = chain.snapshot();
  let caught: unknown;
  try {
    act();
  } catch (err) {
    caught = err;
  }
  expect(caught, `expected ${name}`).toBeInstanceOf(ProgramError);
  const error = caught as ProgramError;
  expect(error.errorName).toBe(name);
  expect(chain.snapshot()).toEqual(before);
  return error;
}

export const newKey = (): PublicKey => Keypair.generate().publicKey;

export const confirmed = (amount: bigint): DepositResultArg => ({ tag: 1, reason: 0, amount });
export const rejected = (reason: number): DepositResultArg => ({ tag: 2, reason, amount: 0n });

export interface TransferData {
  amount: bigint;
  recipient: string;
  sourceMint: string;
}

/** Both chains with initialized trackers, plus instruction helpers named after PROTOCOL.md. */
export class BridgeFixture {
  readonly source = new ProgramChain(SOURCE_CHAIN_ID);
  readonly target = new ProgramChain(TARGET_CHAIN_ID);
  readonly governance = newKey();
  readonly authorities: PublicKey[];
  readonly depositTracker = depositTrackerAddress(PROGRAM_ID, TARGET_CHAIN_ID);
  readonly withdrawTracker = withdrawTrackerAddress(PROGRAM_ID, SOURCE_CHAIN_ID);
  readonly depositor = newKey();

  constructor(options: { authorities?: number; threshold?: number; capacity?: bigint } = {}) {
    const count = options.authorities ?? 3;
    const threshold = options.threshold ?? 2;
    const capacity = options.capacity ?? 16n;
    this.authorities = Array.from({ length: count }, newKey);
    const authorities = this.authorities.map((key) => key.toBase58());
    this.source.run({ name: 'initialize_deposit_tracker', targetChainId: TARGET_CHAIN_ID, capacity, threshold, authorities }, [
      signer(this.governance),
      writable(this.depositTracker),
    ]);
    this.target.run({ name: 'initialize_withdraw_tracker', sourceChainId: SOURCE_CHAIN_ID, capacity, threshold, authorities }, [
      signer(this.governance),
      writable(this.withdrawTracker),
    ]);
  }

  tokenPairAddress(mint: string): PublicKey {
    return tokenPairAddress(PROGRAM_ID, SOURCE_CHAIN_ID, new PublicKey(mint));
  }

  setTokenPair(sourceMint: string, pair: Partial<{ frozen: boolean; limitRemaining: bigint; vaultBalance: bigint }> = {}): void {
    this.target.run(
      {
        name: 'set_token_pair',
        sourceMint,
        targetMint: newKey().toBase58(),
        frozen: pair.frozen ?? false,
        limitRemaining: pair.limitRemaining ?? 1_000_000n,
        vaultBalance: pair.vaultBalance ?? 1_000_000n,
      },
      [signer(this.governance), writable(this.withdrawTracker), writable(this.tokenPairAddress(sourceMint))],
    );
  }

  /** A token pair with a large limit and vault; returns its source mint. */
  normalMint(): string {
    const mint = newKey().toBase58();
    this.setTokenPair(mint);
    return mint;
  }

  deposit(data: TransferData, depositor = this.depositor): void {
    this.source.run({ name: 'deposit', ...data }, [signer(depositor), writable(this.depositTracker)]);
  }

  transfer(amount: bigint, sourceMint: string): TransferData {
    return { amount, recipient: newKey().toBase58(), sourceMint };
  }

  ackDeposit(authority: number, index: bigint, approve: boolean, data: TransferData): void {
    this.target.run({ name: 'ack_deposit', index, approve, ...data }, [
      signer(this.authorities[authority]!),
      writable(this.withdrawTracker),
      readonly(this.tokenPairAddress(data.sourceMint)),
    ]);
  }

  ackWithdraw(authority: number, index: bigint, approve: boolean, result: DepositResultArg): void {
    this.source.run({ name: 'ack_withdraw', index, approve, result }, [signer(this.authorities[authority]!), writable(this.depositTracker)]);
  }

  cleanup(index: bigint, depositor = this.depositor, payer = newKey()): void {
    this.source.run({ name: 'cleanup_deposit', index }, [signer(payer), writable(this.depositTracker), writable(depositor)]);
  }

  withdraw(index: bigint, tokenAccount = newKey()): void {
    this.target.run({ name: 'withdraw', index }, [signer(newKey()), writable(this.withdrawTracker), readonly(tokenAccount)]);
  }

  resetPending(governance = this.governance): void {
    this.source.run({ name: 'reset_pending' }, [signer(governance), writable(this.depositTracker)]);
  }

  depositHeader(): TrackerHeader {
    return header(this.source, this.depositTracker, 'DepositTracker');
  }

  withdrawHeader(): TrackerHeader {
    return header(this.target, this.withdrawTracker, 'WithdrawTracker');
  }

  depositEntry(index: number): DepositEntry {
    return decodeDepositEntry(record(this.source, this.depositTracker, 'DepositTracker', index), 'test', index);
  }

  withdrawEntry(index: number): WithdrawEntry {
    return decodeWithdrawEntry(record(this.target, this.withdrawTracker, 'WithdrawTracker', index), 'test', index);
  }

  withdrawEntryBytes(index: number): Uint8Array {
    return record(this.target, this.withdrawTracker, 'WithdrawTracker', index);
  }

  tokenPair(mint: string): TokenPair {
    return decodeTokenPair(this.target.data(this.tokenPairAddress(mint)), 'test');
  }

  /** Deposit on the source and have authorities 0 and 1 finalize it on the destination (threshold 2). */
  depositAndFinalize(data: TransferData): bigint {
    const index = this.depositHeader().entryCount;
    this.deposit(data);
    this.ackDeposit(0, index, true, data);
    this.ackDeposit(1, index, true, data);
    return index;
  }
}

function header(chain: ProgramChain, address: PublicKey, kind: TrackerKind): TrackerHeader {
  return decodeTrackerHeader(chain.data(address), kind, address.toBase58());
}

function record(chain: ProgramChain, address: PublicKey, kind: TrackerKind, index: number): Uint8Array {
  const offset = entryOffset(kind, index);
  return chain.data(address).slice(offset, offset + entrySize(kind));
}
