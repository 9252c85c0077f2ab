import type { BridgeView, ReadLimits, AckDepositVote, AckWithdrawVote, TrackerWindow } from '../../chain/port/bridge-chains.js';
import type { DepositEntry, WithdrawEntry, CreatedTokenAccount, DepositResult, WithdrawStatus } from '../../chain/types.js';
import { ownNextIndex } from '../../chain/port/authority-position.js';
import { depositResultToWire } from '../../chain/port/result-wire.js';
import { BridgeError } from '../../errors.js';
import { cleanupTurnsOf, NO_TURNS, type CleanupTurns, type CleanupWait } from './cleanup-turns.js';

/**
 * The planner, pure: everything one crank cycle will submit, planned from one BridgeView, in
 * the order a reader meets it: the cycle's plan, then each action's planner (ack_deposit,
 * ack_withdraw with rule 3.1, cleanup_deposit), then how the planners read the view.
 */

/**
 * Everything one crank cycle will submit. JSON-safe (numbers and strings only): it travels in
 * the machine's context and events.
 */
export interface CyclePlan {
  ackDeposit: AckDepositPlan;
  ackWithdraw: AckWithdrawPlan;
  cleanup: CleanupPlan;
}

/**
 * Votes (or cleanups) per action per cycle. Keeps one cycle's submissions, and the time the
 * run lock is held, bounded; 64 votes fit in a handful of transactions. Work beyond it is the
 * backlog, which the next cycle takes at once (docs/crank.md "Timing").
 */
export const MAX_PLANNED_PER_ACTION = 64;

/**
 * What the planners need read for a batch limit: from each position they start at, the batch
 * and one entry more, which tells a backlog from the end of the work.
 */
export function readLimitsFor(limit: number): ReadLimits {
  return { entriesPerPosition: limit + 1 };
}

export function planCycle(view: BridgeView, limit: number = MAX_PLANNED_PER_ACTION, turns: CleanupTurns = NO_TURNS): CyclePlan {
  return {
    ackDeposit: planAckDeposits(view, limit),
    ackWithdraw: planAckWithdraws(view, limit),
    cleanup: planCleanups(view, limit, turns),
  };
}

/** More work was found than the plan holds. */
export function hasBacklog(plan: CyclePlan): boolean {
  return (
    plan.ackDeposit.pending > plan.ackDeposit.votes.length ||
    plan.ackWithdraw.pending > plan.ackWithdraw.votes.length ||
    plan.cleanup.pending > plan.cleanup.indices.length
  );
}

/**
 * ack_deposit votes of an honest authority (PROTOCOL.md "How an honest authority votes"),
 * planned from one fresh BridgeView. Votes start at this authority's own next_index on the
 * WithdrawTracker (the program rejects any other index) and run while the source has entries.
 */

export interface AckDepositPlan {
  /** Consecutive votes from next_index, at most the batch limit. */
  votes: AckDepositVote[];
  /** Source entries this authority still has to vote on, planned or not. */
  pending: number;
}

export function planAckDeposits(view: BridgeView, limit: number): AckDepositPlan {
  const source = view.deposits;
  const destination = view.withdrawals;
  const first = ownNextIndex(destination.header, view.authority, { chain: 'target' });
  const sourceCount = entryIndex(source.header.entryCount);
  // Each proposal appends an entry, so proposals planned in one pass are consecutive from
  // entry_count: every one is "the next proposal" once the previous one lands.
  let entryCount = entryIndex(destination.header.entryCount);
  const votes: AckDepositVote[] = [];

  for (const [index, deposit] of readRun(source, first, sourceCount)) {
    if (votes.length >= limit) break;
    if (index === entryCount) {
      votes.push(depositVote(index, true, deposit));
      entryCount++;
      continue;
    }
    // next_index never exceeds entry_count, and a removed (Empty) entry below entry_count
    // cannot exist: either means the read is inconsistent, and nothing valid can be sent.
    if (index > entryCount) break;
    const withdrawal = entryAt(destination, index);
    if (withdrawal.status === 'Empty') break;
    // Voting and Finalized (a late vote) follow the same rule.
    votes.push(depositVote(index, proposalMatchesDeposit(withdrawal, deposit), deposit));
  }
  return { votes, pending: Math.max(0, sourceCount - first) };
}

/** A destination proposal is right when it carries exactly the source entry's transfer. */
function proposalMatchesDeposit(withdrawal: WithdrawEntry, deposit: DepositEntry): boolean {
  return withdrawal.amount === deposit.amount && withdrawal.recipient === deposit.recipient && withdrawal.sourceMint === deposit.sourceMint;
}

/** The vote always carries the source entry's data: the program ignores it on a no vote. */
function depositVote(index: number, approve: boolean, deposit: DepositEntry): AckDepositVote {
  return {
    index,
    approve,
    amount: deposit.amount.toString(),
    recipient: deposit.recipient,
    sourceMint: deposit.sourceMint,
  };
}

/**
 * ack_withdraw votes of an honest authority: relay each destination result to the source,
 * in order from this authority's own next_index on the DepositTracker, stopping at the first
 * destination entry that rule 3.1 does not allow to relay yet.
 */

/** The part of a WithdrawEntry that rule 3.1 looks at (a decoded entry fits, so does a plan item). */
export interface WithdrawReadiness {
  status: WithdrawStatus;
  createdTokenAccount: CreatedTokenAccount;
  result: { kind: DepositResult['kind'] };
}

/**
 * Rule 3.1: a destination result may be relayed by ack_withdraw only once it is final and
 * the user can no longer be surprised by it: Rejected, or Confirmed with the token account
 * no longer Pending (a Confirmed entry waits until the user claims it).
 */
export function isRelayableWithdrawResult(entry: WithdrawReadiness): boolean {
  if (entry.status !== 'Finalized') return false;
  if (entry.result.kind === 'Rejected') return true;
  return entry.result.kind === 'Confirmed' && entry.createdTokenAccount !== 'Pending';
}

interface PlannedAckWithdraw {
  vote: AckWithdrawVote;
  /** What rule 3.1 was checked on, kept so the machine's guard can check it again. */
  destination: WithdrawReadiness;
}

export interface AckWithdrawPlan {
  votes: PlannedAckWithdraw[];
  /** Results ready for this authority's vote, up to the first unready one or the end of the read, planned or not. */
  pending: number;
}

export function planAckWithdraws(view: BridgeView, limit: number): AckWithdrawPlan {
  const source = view.deposits;
  const destination = view.withdrawals;
  const first = ownNextIndex(source.header, view.authority, { chain: 'source' });
  const end = Math.min(entryIndex(source.header.entryCount), entryIndex(destination.header.entryCount));
  const votes: PlannedAckWithdraw[] = [];
  let pending = 0;

  for (const [index, withdrawal] of readRun(destination, first, end)) {
    if (!isRelayableWithdrawResult(withdrawal)) break;
    // The source read may end before the destination's: the rest is the next cycle's work.
    const deposit = index === first ? entryAt(source, index) : source.entries.get(index);
    if (deposit === undefined || !isValidResultFor(deposit, withdrawal.result)) break;
    pending++;
    if (votes.length < limit) {
      votes.push({
        vote: withdrawVote(index, deposit, withdrawal.result),
        destination: {
          status: withdrawal.status,
          createdTokenAccount: withdrawal.createdTokenAccount,
          result: { kind: withdrawal.result.kind },
        },
      });
    }
  }
  return { votes, pending };
}

/** Initialized: propose the result. Relaying, or Finalized (a late vote): approve exactly when the proposal is this result. */
function withdrawVote(index: number, deposit: DepositEntry, result: DepositResult): AckWithdrawVote {
  const approve = deposit.status === 'Initialized' || sameDepositResult(deposit.proposed, result);
  return { index, approve, result: depositResultToWire(result, `entries[${index}].result`) };
}

export function sameDepositResult(a: DepositResult, b: DepositResult): boolean {
  switch (a.kind) {
    case 'None':
      return b.kind === 'None';
    case 'Confirmed':
      return b.kind === 'Confirmed' && a.amount === b.amount;
    case 'Rejected':
      return b.kind === 'Rejected' && a.reason === b.reason;
  }
}

/**
 * The source program rejects a Confirmed amount above the deposit (InvalidResult) on any
 * vote, yes or no. Honest destinations never produce one; if one appears nothing valid can be
 * sent for that entry, so relaying stops there instead of failing every cycle.
 */
function isValidResultFor(deposit: DepositEntry, result: DepositResult): boolean {
  return result.kind !== 'Confirmed' || result.amount <= deposit.amount;
}

/**
 * cleanup_deposit candidates (rule 3.2, crank cycle step 5): source entries that are
 * Finalized and not cleaned up, less those left to the authority whose turn they are
 * (./cleanup-turns.ts). Everything below settled_prefix is cleaned up already; the read holds a
 * run from settled_prefix, and candidates in the other runs it holds count too.
 */

export interface CleanupPlan {
  /** Candidate entries in index order, at most the batch limit. */
  indices: number[];
  /** All candidates among the entries read, planned or not, less those left to another authority's turn. */
  pending: number;
  /** Candidates of another authority's turn, with how many reads have shown each waiting (those past the grace too). */
  waits: CleanupWait[];
}

export function planCleanups(view: BridgeView, limit: number, turns: CleanupTurns = NO_TURNS): CleanupPlan {
  const { header, entries } = view.deposits;
  const settled = entryIndex(header.settledPrefix);
  const entryCount = entryIndex(header.entryCount);
  if (settled < entryCount) entryAt(view.deposits, settled);
  const { leaves, waits } = cleanupTurnsOf(view, turns);
  const indices: number[] = [];
  let pending = 0;
  for (const [index, entry] of entries) {
    if (index < settled || index >= entryCount || entry.status !== 'Finalized' || entry.cleanupCompleted) continue;
    if (leaves(index, entry)) continue;
    pending++;
    if (indices.length < limit) indices.push(index);
  }
  return { indices, pending, waits };
}

/**
 * Reading a BridgeView the way the planners need it: single entries by index, failing loudly
 * when the read does not cover what voting needs (this authority's position:
 * src/chain/port/authority-position.ts).
 */

/**
 * Entry `index` of a window, which the read must hold: a planner asks for the entry at each
 * position it starts from, so a read that does not start there fails loudly instead of
 * skipping votes silently.
 */
function entryAt<E>(window: TrackerWindow<E>, index: number): E {
  const entry = window.entries.get(index);
  if (entry === undefined) {
    const indices = [...window.entries.keys()];
    const windowStart = indices[0] ?? 0;
    const windowEnd = (indices.at(-1) ?? -1) + 1;
    throw new BridgeError('CRANK__ENTRY_NOT_FOUND', { tracker: window.header.kind, index, windowStart, windowEnd }, { read: indices.length });
  }
  return entry;
}

/**
 * The entries of a window from `first` on while they are consecutive and below `end`: a
 * bounded read ends a run before entry_count, and the planners stop there (the rest is the
 * next cycle's work). The entry at `first` itself must have been read (see entryAt).
 */
function* readRun<E>(window: TrackerWindow<E>, first: number, end: number): Generator<[number, E]> {
  if (first >= end) return;
  yield [first, entryAt(window, first)];
  for (let index = first + 1; index < end; index++) {
    const entry = window.entries.get(index);
    if (entry === undefined) return;
    yield [index, entry];
  }
}

/**
 * An entry index or count as a JS number. Exact: a tracker account is at most 10 MiB, so
 * capacity (and with it every index) stays far below 2^53.
 */
export function entryIndex(value: bigint): number {
  return Number(value);
}
