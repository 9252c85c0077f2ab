import { undo, type Account, type UndoEntry } from '../program/store.js';

/**
 * What each recent slot's transactions replaced, so that the chain can be read as it was at the
 * end of an older slot (the confirmed and finalized banks, commitment-banks.ts) and a fork's
 * slots undone (minority-forks.ts). Per slot, per address, the undo entries its committed
 * transactions returned, oldest first. The account at slot S is the live account with the
 * entries of every later slot undone, newest first; an address no later slot touched is the
 * live account itself, not copied.
 *
 * Memory: the entries of the slots after the oldest slot still read (the finalized bank's), so
 * the bytes written in the last `finalizedLagSlots` slots plus about 100 bytes per write (a vote
 * writes about 200 bytes: 32 slots of 1,000 votes each hold about 10 MB). A whole account
 * replaced (created, closed, a nonce rewritten) keeps the replaced object.
 */
export class SlotHistory {
  /** Slot -> address -> entries, slots in increasing order (Map insertion order). */
  readonly #slots = new Map<number, Map<string, UndoEntry[]>>();

  /** Entries a transaction (or an airdrop, a fee, an advanced nonce) committed in `slot`. */
  record(slot: number, entries: readonly UndoEntry[]): void {
    if (entries.length === 0) return;
    let bySlot = this.#slots.get(slot);
    if (bySlot === undefined) {
      bySlot = new Map();
      this.#slots.set(slot, bySlot);
    }
    for (const entry of entries) {
      const list = bySlot.get(entry.address);
      if (list === undefined) bySlot.set(entry.address, [entry]);
      else list.push(entry);
    }
  }

  /** The account at the end of `slot`: `live` with every later slot's writes to it undone. */
  accountAt(address: string, slot: number, live: Readonly<Account> | undefined): Readonly<Account> | undefined {
    const later = [...this.#slots].filter(([at, bySlot]) => at > slot && bySlot.has(address));
    if (later.length === 0) return live;
    const one = new Map<string, Account>();
    if (live !== undefined) one.set(address, copyAccount(live));
    for (let i = later.length - 1; i >= 0; i -= 1) {
      const entries = later[i]![1].get(address)!;
      for (let j = entries.length - 1; j >= 0; j -= 1) {
        const entry = entries[j]!;
        // A replaced account object is no longer written, but the entries older than it write into it: copy first.
        undo(one, entry.kind === 'account' && entry.previous !== undefined ? { ...entry, previous: copyAccount(entry.previous) } : entry);
      }
    }
    return one.get(address);
  }

  /** Undoes on `accounts` everything slots `from` and later wrote, newest first, and forgets it (a fork abandoned). */
  undoFrom(from: number, accounts: Map<string, Account>): void {
    const abandoned = [...this.#slots].filter(([at]) => at >= from);
    for (let i = abandoned.length - 1; i >= 0; i -= 1) {
      const [at, bySlot] = abandoned[i]!;
      // Within a slot, entries of different addresses are independent: per address, newest first.
      for (const entries of bySlot.values()) {
        for (let j = entries.length - 1; j >= 0; j -= 1) undo(accounts, entries[j]!);
      }
      this.#slots.delete(at);
    }
  }

  /** Forgets the slots no bank reads any more: `oldestRead` and earlier. */
  prune(oldestRead: number): void {
    for (const at of this.#slots.keys()) {
      if (at > oldestRead) return;
      this.#slots.delete(at);
    }
  }

  /** Slots with writes kept (for tests of the bound). */
  get slotsKept(): number {
    return this.#slots.size;
  }
}

export function copyAccount(account: Readonly<Account>): Account {
  return { ...account, data: account.data.slice() };
}

/**
 * The accounts of an older bank, for a simulation on it: each account read once from `read`
 * (SlotHistory.accountAt) and copied on first use, so that a simulation's journal writes and
 * undoes its copies, never the chain's.
 */
export class PastAccounts extends Map<string, Account> {
  readonly #read: (address: string) => Readonly<Account> | undefined;
  readonly #loaded = new Set<string>();

  constructor(read: (address: string) => Readonly<Account> | undefined) {
    super();
    this.#read = read;
  }

  override get(address: string): Account | undefined {
    this.#load(address);
    return super.get(address);
  }

  override has(address: string): boolean {
    this.#load(address);
    return super.has(address);
  }

  override set(address: string, account: Account): this {
    this.#loaded.add(address);
    return super.set(address, account);
  }

  override delete(address: string): boolean {
    this.#loaded.add(address);
    return super.delete(address);
  }

  #load(address: string): void {
    if (this.#loaded.has(address)) return;
    this.#loaded.add(address);
    const account = this.#read(address);
    if (account !== undefined) super.set(address, copyAccount(account));
  }
}
