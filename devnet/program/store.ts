/**
 * The account store the bridge program runs over, and the journal that makes a transaction
 * atomic. Writes go through the journal, which records the bytes they replace: a failed (or
 * simulated) transaction is undone in O(bytes written), so an 8 MB tracker is never copied to
 * apply one vote.
 */

export const SYSTEM_PROGRAM_ID = '11111111111111111111111111111111';

export interface Account {
  lamports: bigint;
  /** base58 program id that owns the account. */
  owner: string;
  data: Uint8Array;
  executable: boolean;
}

/** What a program may do to accounts. `get` returns the live account: never mutate it directly. */
export interface AccountStore {
  get(address: string): Readonly<Account> | undefined;
  writeData(address: string, offset: number, bytes: Uint8Array): void;
  /** Creates the account, replacing whatever was at `address`. */
  create(address: string, account: Account): void;
  setLamports(address: string, lamports: bigint): void;
}

/**
 * What a write replaced, enough to undo it: bytes at an offset, a balance, or a whole account
 * (undefined: there was none). A transaction's journal undoes its own on failure; the bank keeps
 * the committed ones per slot to answer reads at older slots and to abandon a fork (bank/slot-history.ts).
 */
export type UndoEntry =
  | { kind: 'data'; address: string; offset: number; previous: Uint8Array }
  | { kind: 'lamports'; address: string; previous: bigint }
  | { kind: 'account'; address: string; previous: Account | undefined };

/** Undoes one entry on `accounts` (entries are undone newest first). */
export function undo(accounts: Map<string, Account>, entry: UndoEntry): void {
  if (entry.kind === 'account') {
    if (entry.previous === undefined) accounts.delete(entry.address);
    else accounts.set(entry.address, entry.previous);
    return;
  }
  const account = accounts.get(entry.address)!;
  if (entry.kind === 'data') account.data.set(entry.previous, entry.offset);
  else account.lamports = entry.previous;
}

/** An AccountStore over a Map whose changes can be committed or rolled back as one unit. */
export class AccountJournal implements AccountStore {
  readonly #accounts: Map<string, Account>;
  #undo: UndoEntry[] = [];

  constructor(accounts: Map<string, Account>) {
    this.#accounts = accounts;
  }

  get(address: string): Readonly<Account> | undefined {
    return this.#accounts.get(address);
  }

  writeData(address: string, offset: number, bytes: Uint8Array): void {
    const account = this.#existing(address);
    if (offset < 0 || offset + bytes.length > account.data.length) {
      throw new RangeError(`write of ${bytes.length} bytes at offset ${offset} exceeds account ${address} (${account.data.length} bytes)`);
    }
    this.#undo.push({ kind: 'data', address, offset, previous: account.data.slice(offset, offset + bytes.length) });
    account.data.set(bytes, offset);
  }

  create(address: string, account: Account): void {
    this.#undo.push({ kind: 'account', address, previous: this.#accounts.get(address) });
    this.#accounts.set(address, account);
  }

  /** Removes the account (one left without lamports is gone, as on a cluster). */
  remove(address: string): void {
    if (!this.#accounts.has(address)) return;
    this.#undo.push({ kind: 'account', address, previous: this.#accounts.get(address) });
    this.#accounts.delete(address);
  }

  setLamports(address: string, lamports: bigint): void {
    const account = this.#existing(address);
    this.#undo.push({ kind: 'lamports', address, previous: account.lamports });
    account.lamports = lamports;
  }

  /** Keeps the changes; answers what they replaced, oldest first. */
  commit(): UndoEntry[] {
    const committed = this.#undo;
    this.#undo = [];
    return committed;
  }

  rollback(): void {
    for (let i = this.#undo.length - 1; i >= 0; i -= 1) undo(this.#accounts, this.#undo[i]!);
    this.#undo = [];
  }

  #existing(address: string): Account {
    const account = this.#accounts.get(address);
    if (account === undefined) throw new RangeError(`account ${address} does not exist`);
    return account;
  }
}

// Solana's rent: 3480 lamports per byte-year, two years to be exempt, 128 bytes of overhead.
const LAMPORTS_PER_BYTE_YEAR = 3480n;
const EXEMPTION_YEARS = 2n;
const ACCOUNT_STORAGE_OVERHEAD = 128n;

export function rentExemptMinimum(dataLength: number): bigint {
  return (ACCOUNT_STORAGE_OVERHEAD + BigInt(dataLength)) * LAMPORTS_PER_BYTE_YEAR * EXEMPTION_YEARS;
}

/** Lamports of an account the program creates: what was already there, topped up to rent exemption. */
export function rentFundedLamports(existing: bigint | undefined, dataLength: number): bigint {
  const minimum = rentExemptMinimum(dataLength);
  return existing !== undefined && existing > minimum ? existing : minimum;
}
