/**
 * The recent prioritization fees of one chain, as Agave's PrioritizationFeeCache keeps them for
 * getRecentPrioritizationFees: per completed slot, the lowest compute-unit price of the
 * transactions that landed in it (0 for an empty slot) and, per writable account, the lowest
 * price of those that wrote it. A query for accounts answers, per slot, the largest of the
 * slot's minimum and those accounts' minimums. Transactions that request a limit of 0 are left
 * out (their price says nothing). The last 150 slots are kept.
 *
 * Congestion, in one of two modes. `floor` (the default): while a price floor is set, each
 * completed slot reports at least the floor, a history that shows the surge. `minimum`: as
 * Agave's cache reports a real surge (PROTOCOL.md "Compute units and fees"), the blocks also
 * carry non-contending zero-fee transactions, so a slot's minimum is 0 and only the queried
 * accounts' own landed prices show, in the slots where a transaction wrote them: mostly 0.
 * While the history is frozen, each completed slot reports what the last slot before the freeze
 * reported and nothing of what lands: a surge the history has not caught up with.
 */

export type FeeHistoryMode = 'floor' | 'minimum';

const MAX_RECENT_SLOTS = 150;

interface SlotFees {
  slot: number;
  minPrice: bigint;
  byAccount: Map<string, bigint>;
}

export interface PrioritizationFee {
  slot: number;
  prioritizationFee: bigint;
}

export class PrioritizationFees {
  readonly #completed: SlotFees[] = [];
  #open: { min?: bigint; byAccount: Map<string, bigint> } = { byAccount: new Map() };
  #frozenAt: bigint | undefined;
  mode: FeeHistoryMode = 'floor';

  /** A transaction landed in the open slot. */
  recordTransaction(unitPrice: bigint, unitLimit: number, writableAccounts: readonly string[]): void {
    if (unitLimit === 0) return;
    const open = this.#open;
    open.min = open.min === undefined || unitPrice < open.min ? unitPrice : open.min;
    for (const account of writableAccounts) {
      const current = open.byAccount.get(account);
      if (current === undefined || unitPrice < current) open.byAccount.set(account, unitPrice);
    }
  }

  /** The open slot is complete: its fees are final, with `floor` as their least. */
  completeSlot(slot: number, floor: bigint): void {
    const { min, byAccount } = this.#open;
    this.#open = { byAccount: new Map() };
    const minPrice = this.mode === 'floor' ? max(min ?? 0n, floor) : 0n;
    const fees: SlotFees = this.#frozenAt === undefined ? { slot, minPrice, byAccount } : { slot, minPrice: this.#frozenAt, byAccount: new Map() };
    this.#completed.push(fees);
    if (this.#completed.length > MAX_RECENT_SLOTS) this.#completed.shift();
  }

  /** Freezes the history at the last completed slot's fee (true), or lets it follow the chain again. */
  freeze(frozen: boolean): void {
    if (!frozen) this.#frozenAt = undefined;
    else this.#frozenAt ??= this.#completed.at(-1)?.minPrice ?? 0n;
  }

  get frozen(): boolean {
    return this.#frozenAt !== undefined;
  }

  /** Oldest slot first, as a node answers. */
  recent(accounts: readonly string[]): PrioritizationFee[] {
    return this.#completed.map(({ slot, minPrice, byAccount }) => ({
      slot,
      prioritizationFee: accounts.reduce((fee, account) => max(fee, byAccount.get(account) ?? 0n), minPrice),
    }));
  }
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
