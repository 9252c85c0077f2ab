import { PublicKey, SYSVAR_RECENT_BLOCKHASHES_PUBKEY, type TransactionInstruction } from '@solana/web3.js';
import type { Logger } from '../../../log/logger.js';
import { describeError } from '../../../errors.js';
import { MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES, TRANSACTION_ACCOUNT_BASE_SIZE } from '../../codec/compute-budget.js';
import { trackerAccountSize } from '../../codec/layout.js';
import type { ChainRpc } from '../../rpc/chain-rpc.js';
import type { TrackerKind } from '../../types.js';

/**
 * What a crank transaction loads, for its SetLoadedAccountsDataSizeLimit (docs/chain-client.md
 * "Loaded accounts data size"). Agave counts every account the message lists, once, at its data
 * length plus TRANSACTION_ACCOUNT_BASE_SIZE, and for an upgradeable program also its programdata
 * account the same way (SIMD-0186); without the instruction the limit is 64 MiB, and the cost
 * model charges the transaction for 64 MiB of loads, which lowers its priority in the block.
 *
 * Sizes come from reads the crank makes anyway: each cycle's tracker header (the capacity fixes
 * the account's length, checked against the node's `space`), and once per process the bridge
 * program with its programdata and the RecentBlockhashes sysvar (one slice of at most 36 bytes
 * each). Every other account (the authority, the builtin programs, token pairs, nonce accounts,
 * depositors) counts UNREAD_ACCOUNT_ALLOWANCE: all of these hold at most 104 bytes, except a
 * depositor, which can hold anything; a transaction that loads more than its limit fails its
 * simulation, and that transaction goes under the 64 MiB default (compute-budget.ts).
 */

/** The data an account the crank has not read is taken to hold: a token pair's 104 bytes, rounded up. */
export const UNREAD_ACCOUNT_ALLOWANCE = 128;

const BPF_UPGRADEABLE_LOADER = new PublicKey('BPFLoaderUpgradeab1e11111111111111111111111');
// UpgradeableLoaderState::Program: a u32 tag 2, then the programdata address.
const PROGRAM_STATE_SIZE = 36;
const PROGRAM_STATE_TAG = 2;
const PROGRAM_READ_COMMITMENT = 'confirmed';

export class LoadedAccounts {
  /** Bytes each read account loads: its data plus the base (plus its programdata, for a program); 0 when it does not exist. */
  readonly #loads = new Map<string, number>();
  #programsRead = false;

  constructor(private readonly options: { rpc: ChainRpc; programId: PublicKey; logger: Logger }) {}

  /** This cycle's tracker header: its capacity fixes the account's length. */
  recordTracker(address: PublicKey, kind: TrackerKind, capacity: bigint): void {
    this.#loads.set(address.toBase58(), TRANSACTION_ACCOUNT_BASE_SIZE + trackerAccountSize(kind, Number(capacity)));
  }

  /**
   * The bridge program (with its programdata) and the RecentBlockhashes sysvar, read once; again
   * after a transaction loaded more than its limit (an upgrade may have grown the program). A
   * read that fails, or a node that does not report `space`, leaves the limit at 64 MiB until
   * the next cycle's read.
   */
  async readPrograms(signal: AbortSignal): Promise<void> {
    if (this.#programsRead) return;
    try {
      const [program, sysvar] = await Promise.all([this.#programLoads(signal), this.#spaceOf(SYSVAR_RECENT_BLOCKHASHES_PUBKEY, signal)]);
      if (program === undefined || sysvar === undefined) return;
      this.#loads.set(this.options.programId.toBase58(), program);
      this.#loads.set(SYSVAR_RECENT_BLOCKHASHES_PUBKEY.toBase58(), sysvar);
      this.#programsRead = true;
    } catch (err) {
      if (signal.aborted) throw err;
      this.options.logger.warn(
        { chain: this.options.rpc.chain, err: describeError(err) },
        'program account sizes not read: transactions ask the 64 MiB default loaded-accounts data size',
      );
    }
  }

  /** A transaction loaded more than its limit: the program may have grown, so it is read again. */
  exceeded(): void {
    this.#programsRead = false;
  }

  /** The limit for a transaction of `instructions` paid by `feePayer`: what it loads as Agave counts it, at most 64 MiB. */
  limitFor(feePayer: PublicKey, instructions: readonly TransactionInstruction[]): number {
    if (!this.#programsRead) return MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES;
    const keys = new Set([feePayer.toBase58()]);
    for (const instruction of instructions) {
      keys.add(instruction.programId.toBase58());
      for (const meta of instruction.keys) keys.add(meta.pubkey.toBase58());
    }
    let bytes = 0;
    for (const key of keys) bytes += this.#loads.get(key) ?? TRANSACTION_ACCOUNT_BASE_SIZE + UNREAD_ACCOUNT_ALLOWANCE;
    return Math.min(bytes, MAX_LOADED_ACCOUNTS_DATA_SIZE_BYTES);
  }

  /** The program account's load, with its programdata's when the upgradeable loader owns it. */
  async #programLoads(signal: AbortSignal): Promise<number | undefined> {
    const { rpc, programId } = this.options;
    const dataSlice = { offset: 0, length: PROGRAM_STATE_SIZE };
    const { account } = await rpc.getAccountInfo(programId, { commitment: PROGRAM_READ_COMMITMENT, dataSlice }, signal);
    if (account === null) return 0;
    if (account.space === undefined) return undefined;
    const own = TRANSACTION_ACCOUNT_BASE_SIZE + account.space;
    const upgradeable =
      account.owner.equals(BPF_UPGRADEABLE_LOADER) && account.data.length === PROGRAM_STATE_SIZE && account.data[0] === PROGRAM_STATE_TAG;
    if (!upgradeable) return own;
    const programData = await this.#spaceOf(new PublicKey(account.data.subarray(4, PROGRAM_STATE_SIZE)), signal);
    return programData === undefined ? undefined : own + programData;
  }

  /** An account's load from a zero-byte slice and the node's `space`; 0 when it does not exist. */
  async #spaceOf(address: PublicKey, signal: AbortSignal): Promise<number | undefined> {
    const { account } = await this.options.rpc.getAccountInfo(
      address,
      { commitment: PROGRAM_READ_COMMITMENT, dataSlice: { offset: 0, length: 0 } },
      signal,
    );
    if (account === null) return 0;
    return account.space === undefined ? undefined : TRANSACTION_ACCOUNT_BASE_SIZE + account.space;
  }
}
