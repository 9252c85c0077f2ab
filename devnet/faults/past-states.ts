import type { Account } from '../program/store.js';

/**
 * The chain's account state as it was at recent slots, for a lagging backend that serves old
 * state at its old slot (`alternateBehindSlots`). A copy is kept of the state at the first call
 * in each slot while the fault is on, under the last completed slot (a transaction landing in
 * the open slot is not in it), at most MAX_PAST_STATES of them, the oldest dropped first:
 * a backend asked to lag further serves the oldest copy kept, at that copy's slot.
 */

/** Copies kept: enough for a backend seconds behind at the 400 ms slots of a real cluster (and of `devnet up`). */
const MAX_PAST_STATES = 256;

export interface PastState {
  slot: number;
  accounts: ReadonlyMap<string, Readonly<Account>>;
}

export class PastStates {
  #states: PastState[] = [];

  /** Keeps the state at `slot` (copied by `copy`) unless a copy for that slot is already kept. */
  record(slot: number, copy: () => Map<string, Account>): void {
    if (this.#states.at(-1)?.slot === slot) return;
    this.#states.push({ slot, accounts: copy() });
    if (this.#states.length > MAX_PAST_STATES) this.#states.shift();
  }

  /** The newest state kept at or before `slot`, else the oldest kept; undefined when none is. */
  at(slot: number): PastState | undefined {
    const before = this.#states.filter((state) => state.slot <= slot).at(-1);
    return before ?? this.#states[0];
  }

  clear(): void {
    this.#states = [];
  }
}
