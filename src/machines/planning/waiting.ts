import type { BridgeView } from '../../chain/port/bridge-chains.js';
import { ownNextIndex } from '../../chain/port/authority-position.js';
import type { ChainSide, CrankAction } from '../../domain.js';
import { type CyclePlan, entryIndex } from './cycle-plan.js';

/**
 * How long work has waited for this authority, from the read the cycle planned on and nothing
 * else (docs/crank.md "Waiting and latency"): each entry carries its own clock on the chain
 * (PROTOCOL: DepositEntry.deposit_slot on the source, WithdrawEntry.finalized_slot on the
 * destination) and the view carries the slot its reads were answered at. Ages are in slots of
 * that chain; the runtime turns them into seconds with the chain's measured slot time
 * (slot-clock.ts). Pure and JSON-safe: it travels in the machine's `planned` event.
 *
 * What each action's age counts from:
 * - ack_deposit: the deposit (deposit_slot) of the first source entry this authority has not
 *   voted on;
 * - ack_withdraw: the destination result's finalization (finalized_slot) of the first result
 *   this authority may relay; a user who claims late makes it older than the wait for this
 *   authority, by the time the user took;
 * - cleanup_deposit: the deposit (deposit_slot) of the first Finalized entry not cleaned up; a
 *   DepositEntry keeps no slot of its finalization, so this is the whole transfer's age.
 */

export type VoteAction = Exclude<CrankAction, 'cleanup_deposit'>;

interface WaitingEntry {
  index: number;
  /** Slots between the entry's own slot and the read's slot on its chain. */
  ageSlots: number;
}

/** A planned vote and the age of the entry it votes on, in slots at the read. */
interface VoteAge {
  index: number;
  ageSlots: number;
}

/** A source entry as read, for telling when a transfer finalized and was cleaned up. */
export interface DepositProgress {
  index: number;
  depositSlot: number;
  finalized: boolean;
  cleanedUp: boolean;
}

export interface WaitingRead {
  slots: Record<ChainSide, number>;
  /** The oldest entry waiting for this authority per action; null when none waits. */
  oldest: Record<CrankAction, WaitingEntry | null>;
  votes: Record<VoteAction, VoteAge[]>;
  /** Every entry below it is cleaned up (and so finalized). */
  settledPrefix: number;
  deposits: DepositProgress[];
}

/** The chain whose slots each action's ages count. */
export const AGE_CHAIN: Readonly<Record<CrankAction, ChainSide>> = {
  ack_deposit: 'source',
  ack_withdraw: 'target',
  cleanup_deposit: 'source',
};

export function waitingRead(view: BridgeView, plan: CyclePlan): WaitingRead {
  const depositAge = (index: number): number => ageOf(view.slots.source, view.deposits.entries.get(index)?.depositSlot);
  const resultAge = (index: number): number => ageOf(view.slots.target, view.withdrawals.entries.get(index)?.finalizedSlot);
  const ackDepositFrom = ownNextIndex(view.withdrawals.header, view.authority, { chain: 'target' });
  const ackWithdrawFrom = ownNextIndex(view.deposits.header, view.authority, { chain: 'source' });
  const firstCleanup = plan.cleanup.indices[0];
  return {
    slots: { ...view.slots },
    oldest: {
      ack_deposit: plan.ackDeposit.pending > 0 ? waiting(ackDepositFrom, depositAge) : null,
      ack_withdraw: plan.ackWithdraw.pending > 0 ? waiting(ackWithdrawFrom, resultAge) : null,
      cleanup_deposit: firstCleanup === undefined ? null : waiting(firstCleanup, depositAge),
    },
    votes: {
      ack_deposit: plan.ackDeposit.votes.map(({ index }) => ({ index, ageSlots: depositAge(index) })),
      ack_withdraw: plan.ackWithdraw.votes.map(({ vote: { index } }) => ({ index, ageSlots: resultAge(index) })),
    },
    settledPrefix: entryIndex(view.deposits.header.settledPrefix),
    deposits: [...view.deposits.entries].map(([index, entry]) => ({
      index,
      depositSlot: Number(entry.depositSlot),
      finalized: entry.status === 'Finalized',
      cleanedUp: entry.cleanupCompleted,
    })),
  };
}

function waiting(index: number, age: (index: number) => number): WaitingEntry {
  return { index, ageSlots: age(index) };
}

/**
 * Slots from `entrySlot` to `readSlot`. Never negative: the entries of a view may come from a
 * later read than the slot it reports (a node answers at least minContextSlot), so an entry
 * made in between is younger than the read, not from the future. An entry the read does not
 * hold has no age (0): the planners fail such a read before it gets here.
 */
function ageOf(readSlot: number, entrySlot: bigint | undefined): number {
  return entrySlot === undefined ? 0 : Math.max(0, readSlot - Number(entrySlot));
}

/** The stages of a transfer the server sees finishing on the source, named by what finished them. */
type TransferStage = 'ack_withdraw' | 'cleanup';

export interface FinishedStage {
  stage: TransferStage;
  index: number;
  /** Slots from deposit_slot to the read that first saw the stage done. */
  ageSlots: number;
}

/**
 * Stages that finished between two reads: a source entry the previous read held unfinished and
 * this read holds Finalized (stage ack_withdraw: its ack_withdraw reached threshold) or cleaned
 * up (stage cleanup), or that fell below settled_prefix (both). Seen at this read, so each is
 * late by at most the time between the two reads. An entry this read does not hold, or holds
 * with another deposit_slot (a governance reset reused its index), is not counted.
 */
export function stagesFinished(previous: readonly DepositProgress[], current: WaitingRead): FinishedStage[] {
  const now = new Map(current.deposits.map((entry) => [entry.index, entry]));
  const finished: FinishedStage[] = [];
  for (const before of previous) {
    if (before.cleanedUp) continue;
    const after = now.get(before.index);
    const settled = before.index < current.settledPrefix;
    if (after === undefined ? !settled : after.depositSlot !== before.depositSlot) continue;
    const ageSlots = Math.max(0, current.slots.source - before.depositSlot);
    if (!before.finalized && (settled || after?.finalized === true)) finished.push({ stage: 'ack_withdraw', index: before.index, ageSlots });
    if (settled || after?.cleanedUp === true) finished.push({ stage: 'cleanup', index: before.index, ageSlots });
  }
  return finished;
}
