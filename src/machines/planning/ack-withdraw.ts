import type { AckWithdrawVote, BridgeView } from '../../chain/bridge-chains.js';
import type { CreatedTokenAccount, DepositEntry, DepositResult, WithdrawStatus } from '../../chain/types.js';
import { depositResultToWire } from '../../chain/result-wire.js';
import { ownNextIndex } from '../../chain/authority-position.js';
import { entryAt, entryIndex, readRun } from './view-access.js';

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
