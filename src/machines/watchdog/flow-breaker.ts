import type { AckDepositVote } from '../../chain/port/bridge-chains.js';
import type { CyclePlan } from '../planning/cycle-plan.js';

/**
 * The flow breaker (BRIDGE_FLOW_LIMIT_<MINT>=<amount>/<hours>, docs/operating.md "The
 * watchdog"), pure: this authority's yes votes on ack_deposit (what releases value on the
 * destination) may carry at most `amount` of one source mint within the window. The first vote
 * that would pass it holds the destination queue there: votes are in order from next_index, so
 * the held vote and every vote after it wait (nothing is skipped) until the window allows it or
 * an operator releases that transfer (`npm run ops -- flow release <hold>`). No votes carry no
 * value and pass, in their place in the queue.
 */

export interface FlowLimit {
  /** The source mint (base58). */
  mint: string;
  /** Base units of the mint per window. */
  amount: bigint;
  windowMs: number;
}

/** A yes vote this authority planned, by entry index (re-planning the same vote counts it once). */
export interface FlowVote {
  mint: string;
  amount: bigint;
  atMs: number;
}

export interface HeldTransfer {
  /** What `npm run ops -- flow release` names: the entry, its mint and amount. */
  id: string;
  index: number;
  mint: string;
  amount: string;
  /** Carried in the window before it, and the limit. */
  carried: string;
  limit: string;
  window_hours: number;
}

function holdId(index: number, mint: string, amount: bigint | string): string {
  return `flow:${index}:${mint}:${amount}`;
}

/**
 * The plan with its ack_deposit votes cut at the first yes vote the limits refuse, and the yes
 * votes it keeps recorded in `votes` (the window's history, pruned of votes older than every window).
 */
export function limitFlow(
  plan: CyclePlan,
  limits: ReadonlyMap<string, FlowLimit>,
  votes: Map<number, FlowVote>,
  released: ReadonlySet<string>,
  nowMs: number,
): { plan: CyclePlan; held: HeldTransfer | null } {
  if (limits.size === 0) return { plan, held: null };
  const longest = Math.max(...[...limits.values()].map((limit) => limit.windowMs));
  for (const [index, vote] of votes) if (nowMs - vote.atMs > longest) votes.delete(index);
  const kept: AckDepositVote[] = [];
  let held: HeldTransfer | null = null;
  for (const vote of plan.ackDeposit.votes) {
    const limit = limits.get(vote.sourceMint);
    if (vote.approve && limit !== undefined && !votes.has(vote.index)) {
      const amount = BigInt(vote.amount);
      const carried = carriedWithin(votes, limit, nowMs);
      const id = holdId(vote.index, vote.sourceMint, amount);
      if (carried + amount > limit.amount && !released.has(id)) {
        held = {
          id,
          index: vote.index,
          mint: vote.sourceMint,
          amount: vote.amount,
          carried: carried.toString(),
          limit: limit.amount.toString(),
          window_hours: limit.windowMs / 3_600_000,
        };
        break;
      }
      votes.set(vote.index, { mint: vote.sourceMint, amount, atMs: nowMs });
    }
    kept.push(vote);
  }
  if (held === null) return { plan, held };
  // What waits behind the hold is not backlog: the machine must not run cycles back to back for it.
  return { plan: { ...plan, ackDeposit: { votes: kept, pending: kept.length } }, held };
}

function carriedWithin(votes: ReadonlyMap<number, FlowVote>, limit: FlowLimit, nowMs: number): bigint {
  let sum = 0n;
  for (const vote of votes.values()) if (vote.mint === limit.mint && nowMs - vote.atMs <= limit.windowMs) sum += vote.amount;
  return sum;
}
