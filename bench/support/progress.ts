import type { BenchWorld } from './bench-world.js';
import { nextIndexOf, readTrackers } from './ledger.js';

/**
 * Watches the ledger while a run goes on: when each transfer was first seen cleaned up, which
 * target entries wait for their user's claim, and whether the whole run is settled (every
 * deposit cleaned up and every authority's own position past it on both trackers, i.e. the late
 * votes cast too). Times are performance.now() milliseconds, as precise as the sampling.
 */

export interface ProgressSample {
  /** Target entries Finalized, Confirmed, token account Pending: their user may claim. */
  claimable: number[];
  cleanedUp: number;
  settled: boolean;
}

export class TransferProgress {
  readonly #bench: BenchWorld;
  readonly #count: number;
  readonly #cleanedUpAt = new Map<number, number>();

  constructor(bench: BenchWorld, count: number) {
    this.#bench = bench;
    this.#count = count;
  }

  sample(): ProgressSample {
    const now = performance.now();
    const { deposits, withdrawals } = readTrackers(this.#bench);
    deposits.entries.forEach((entry, index) => {
      if (entry.cleanupCompleted && !this.#cleanedUpAt.has(index)) this.#cleanedUpAt.set(index, now);
    });
    const claimable: number[] = [];
    withdrawals.entries.forEach((entry, index) => {
      if (entry.status === 'Finalized' && entry.result.kind === 'Confirmed' && entry.createdTokenAccount === 'Pending') claimable.push(index);
    });
    const keys = this.#bench.authorities.map((authority) => authority.publicKey.toBase58());
    const positionsDone = keys.every((key) => nextIndexOf(deposits, key) >= this.#count && nextIndexOf(withdrawals, key) >= this.#count);
    const cleanedUp = this.#cleanedUpAt.size;
    return { claimable, cleanedUp, settled: cleanedUp >= this.#count && positionsDone };
  }

  /** When entry `index` was first seen cleaned up, if it was. */
  cleanedUpAt(index: number): number | undefined {
    return this.#cleanedUpAt.get(index);
  }
}
