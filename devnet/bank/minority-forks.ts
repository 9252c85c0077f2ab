import { DevnetError } from '../devnet-error.js';

/**
 * Minority forks on demand (faults `abandonSlots`, `forkShare`): which completed slots start a
 * fork that the cluster abandons. A fork starts at a slot that holds at least one transaction
 * and takes the slots built on it until the confirmed bank would reach its first slot
 * (`confirmedLagSlots` slots in all): its transactions are seen at `processed` only, never
 * `confirmed`, and when the head opens the slot that would confirm it, every slot of the fork is
 * undone (statuses gone, state rolled back, the blockhashes made on it forgotten), as an RPC node
 * on a minority fork switches to the majority's, on which those slots were skipped. One fork at
 * a time; a slot decided while one is open is part of it.
 */

export interface ForkSettings {
  /** The next N slots that hold a transaction each start a fork. */
  abandonSlots?: number;
  /** Each slot that holds a transaction starts a fork with this probability (0..1), drawn from `random`. */
  forkShare?: number;
}

export interface ForkState {
  abandonSlots: number;
  forkShare: number;
  /** Forks abandoned since the start, and transactions lost with them. */
  abandonedForks: number;
  abandonedTransactions: number;
}

export class MinorityForks {
  #abandonSlots = 0;
  #forkShare = 0;
  #random: () => number = () => 1;
  #open: { from: number; abandonAt: number } | undefined;
  #abandonedForks = 0;
  #abandonedTransactions = 0;

  set(settings: ForkSettings, confirmedLagSlots: number, random: () => number): void {
    const asked = (settings.abandonSlots ?? 0) > 0 || (settings.forkShare ?? 0) > 0;
    if (asked && confirmedLagSlots === 0) {
      throw new DevnetError(
        'DEVNET__INVALID_OPTION',
        { option: 'faults', reason: 'confirmedLagSlots is 0' },
        'invalid fault settings: a fork needs a confirmed bank behind the head (commitmentLags.confirmedLagSlots >= 1): with 0 every processed slot is confirmed at once and none can be abandoned',
      );
    }
    if (settings.abandonSlots !== undefined) this.#abandonSlots = settings.abandonSlots;
    if (settings.forkShare !== undefined) this.#forkShare = settings.forkShare;
    this.#random = random;
  }

  clear(): void {
    this.#abandonSlots = 0;
    this.#forkShare = 0;
  }

  /** Slot `slot` completed holding `transactions`: it may start a fork, abandoned when the head opens `slot + confirmedLagSlots`. */
  completed(slot: number, transactions: number, confirmedLagSlots: number): void {
    if (this.#open !== undefined || transactions === 0) return;
    const starts = this.#abandonSlots > 0 || (this.#forkShare > 0 && this.#random() < this.#forkShare);
    if (!starts) return;
    if (this.#abandonSlots > 0) this.#abandonSlots -= 1;
    this.#open = { from: slot, abandonAt: slot + confirmedLagSlots };
  }

  /** The first slot of the fork to abandon now that the head opened `slot`, or undefined. */
  due(slot: number): number | undefined {
    if (this.#open === undefined || slot < this.#open.abandonAt) return undefined;
    const { from } = this.#open;
    this.#open = undefined;
    return from;
  }

  abandoned(transactions: number): void {
    this.#abandonedForks += 1;
    this.#abandonedTransactions += transactions;
  }

  get state(): ForkState {
    return {
      abandonSlots: this.#abandonSlots,
      forkShare: this.#forkShare,
      abandonedForks: this.#abandonedForks,
      abandonedTransactions: this.#abandonedTransactions,
    };
  }
}
