import type { DevnetTransaction } from '../bank/transaction.js';
import { SYSTEM_PROGRAM_ID } from '../program/store.js';

/**
 * A congested cluster's sending side (docs/devnet.md, "Congestion: forwarding and a staked
 * path"): a plain RPC node forwards only a share of what it accepts to the leader (the rest is
 * answered with its signature and never lands), a staked path forwards all of it and may
 * require a tip inside the transaction. Which signature an endpoint of the chain first received
 * in which slot is kept (`ReceivedLog`), so that slots from send to landed can be read beside
 * the bank's landed slot.
 */

/** System program Transfer: variant 2 as a u32 LE, then the lamports as a u64 LE. */
const SYSTEM_TRANSFER = 2;

/** The lamports `tx` transfers to `account` through System transfers signed inside it. */
export function tipPaid(tx: DevnetTransaction, account: string): bigint {
  let paid = 0n;
  for (const instruction of tx.instructions) {
    if (tx.accountKeys[instruction.programIdIndex] !== SYSTEM_PROGRAM_ID) continue;
    const { data, accountIndexes } = instruction;
    if (data.length !== 12 || Buffer.from(data).readUInt32LE(0) !== SYSTEM_TRANSFER) continue;
    if (tx.accountKeys[accountIndexes[1] ?? -1] !== account) continue;
    paid += Buffer.from(data).readBigUInt64LE(4);
  }
  return paid;
}

/** Signatures kept: far more than a test or bench sends while it watches. */
const MAX_RECEIVED = 10_000;

/** The slot in which any endpoint of one chain first received each signature (the last MAX_RECEIVED). */
export class ReceivedLog {
  readonly #slots = new Map<string, number>();

  received(signature: string, slot: number): void {
    if (this.#slots.has(signature)) return;
    this.#slots.set(signature, slot);
    if (this.#slots.size > MAX_RECEIVED) this.#slots.delete(this.#slots.keys().next().value!);
  }

  slotOf(signature: string): number | undefined {
    return this.#slots.get(signature);
  }
}
