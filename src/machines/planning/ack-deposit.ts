import type { AckDepositVote, BridgeView } from '../../chain/bridge-chains.js';
import type { DepositEntry, WithdrawEntry } from '../../chain/types.js';
import { ownNextIndex } from '../../chain/authority-position.js';
import { entryAt, entryIndex, readRun } from './view-access.js';

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
  return (
    withdrawal.amount === deposit.amount &&
    withdrawal.recipient === deposit.recipient &&
    withdrawal.sourceMint === deposit.sourceMint
  );
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
