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

/** An AccountStore over a Map whose changes can be committed or rolled back as one unit. */
export class AccountJournal implements AccountStore {
  readonly #accounts: Map<string, Account>;
  #undo: Array<() => void> = [];

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
    const previous = account.data.slice(offset, offset + bytes.length);
    this.#undo.push(() => account.data.set(previous, offset));
    account.data.set(bytes, offset);
  }

  create(address: string, account: Account): void {
    const previous = this.#accounts.get(address);
    this.#undo.push(() => (previous === undefined ? this.#accounts.delete(address) : this.#accounts.set(address, previous)));
    this.#accounts.set(address, account);
  }

  setLamports(address: string, lamports: bigint): void {
    const account = this.#existing(address);
    const previous = account.lamports;
    this.#undo.push(() => (account.lamports = previous));
    account.lamports = lamports;
  }

  commit(): void {
    this.#undo = [];
  }

  rollback(): void {
    for (let i = this.#undo.length - 1; i >= 0; i -= 1) this.#undo[i]!();
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
