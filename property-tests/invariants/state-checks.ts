import type { DepositResult, WithdrawEntry } from '../../src/chain/types.js';
import { resultText } from '../../src/machines/watchdog/invariants.js';
import type { BridgeState } from '../system/snapshot.js';

/**
 * Invariants that hold of any single state of the two chains. Each returns the violations it
 * finds, one sentence each, naming the invariant and the entry.
 *
 * The rules here (rule 3.1, equal results, equal transfers) are written again from SPEC.md and
 * PROTOCOL.md on purpose instead of importing the crank's guards and planners: an oracle that
 * shares the code under test cannot catch that code's bugs. Only the text naming a result
 * (resultText) is shared.
 */

export function sameResult(a: DepositResult, b: DepositResult): boolean {
  if (a.kind === 'Confirmed' && b.kind === 'Confirmed') return a.amount === b.amount;
  if (a.kind === 'Rejected' && b.kind === 'Rejected') return a.reason === b.reason;
  return a.kind === b.kind;
}

/** What a deposit, its destination entry and an ack_deposit vote must agree on. */
export interface Transfer {
  amount: bigint;
  recipient: string;
  sourceMint: string;
}

export function sameTransfer(a: Transfer, b: Transfer): boolean {
  return a.amount === b.amount && a.recipient === b.recipient && a.sourceMint === b.sourceMint;
}

/** 1. A deposit is Finalized on the source only with the result its destination entry finalized with. */
export function finalizedWithDestinationResult(state: BridgeState): string[] {
  return state.source.entries.flatMap((deposit, index) => {
    if (deposit.status !== 'Finalized') return [];
    const withdrawal = state.target.entries[index];
    if (withdrawal?.status !== 'Finalized') {
      return [
        `1: deposit ${index} is Finalized with ${resultText(deposit.result)} but destination entry ${index} is ${withdrawal?.status ?? 'missing'}`,
      ];
    }
    if (!sameResult(deposit.result, withdrawal.result)) {
      return [
        `1: deposit ${index} is Finalized with ${resultText(deposit.result)}, its destination entry finalized with ${resultText(withdrawal.result)}`,
      ];
    }
    return [];
  });
}

/** 3. refunded_amount + confirmed amount = deposited amount; Rejected refunds everything. */
export function cleanupConserves(state: BridgeState): string[] {
  return state.source.entries.flatMap((deposit, index) => {
    if (!deposit.cleanupCompleted) return [];
    const confirmed = deposit.result.kind === 'Confirmed' ? deposit.result.amount : 0n;
    if (deposit.status !== 'Finalized' || deposit.result.kind === 'None') {
      return [`3: deposit ${index} is cleaned up while ${deposit.status} with result ${resultText(deposit.result)}`];
    }
    if (deposit.refundedAmount + confirmed !== deposit.amount) {
      return [
        `3: deposit ${index} of ${deposit.amount} cleaned up with ${resultText(deposit.result)} refunded ${deposit.refundedAmount} ` +
          `(refund + confirmed = ${deposit.refundedAmount + confirmed})`,
      ];
    }
    return [];
  });
}

/** 5. Every finalized destination entry carries exactly its source deposit's transfer. */
export function finalizedTransfersAreTrue(state: BridgeState): string[] {
  return state.target.entries.flatMap((withdrawal, index) => {
    if (withdrawal.status !== 'Finalized') return [];
    const deposit = state.source.entries[index];
    if (deposit === undefined) return [`5: destination entry ${index} finalized a transfer of ${withdrawal.amount} that no deposit made`];
    if (!sameTransfer(withdrawal, deposit)) {
      return [
        `5: destination entry ${index} finalized (${withdrawal.amount}, ${withdrawal.recipient}, ${withdrawal.sourceMint}) ` +
          `but deposit ${index} is (${deposit.amount}, ${deposit.recipient}, ${deposit.sourceMint})`,
      ];
    }
    return [];
  });
}

/** Rule 3.1: a destination result an ack_withdraw may relay. */
export function isRelayable(withdrawal: WithdrawEntry | undefined): boolean {
  if (withdrawal?.status !== 'Finalized') return false;
  return withdrawal.result.kind === 'Rejected' || (withdrawal.result.kind === 'Confirmed' && withdrawal.createdTokenAccount !== 'Pending');
}

/** Every deposit Finalized and cleaned up (liveness, 7). */
export function unsettledDeposits(state: BridgeState): string[] {
  return state.source.entries.flatMap((deposit, index) =>
    deposit.status === 'Finalized' && deposit.cleanupCompleted
      ? []
      : [
          `deposit ${index} (${deposit.amount}) is ${deposit.status}${deposit.status === 'Finalized' ? ', not cleaned up' : ''}; destination entry ${index} is ${describeWithdrawal(state.target.entries[index])}`,
        ],
  );
}

function describeWithdrawal(entry: WithdrawEntry | undefined): string {
  if (entry === undefined) return 'missing';
  if (entry.status !== 'Finalized') return `${entry.status} (yes ${entry.yesVotes.toString(2)}, no ${entry.noVotes.toString(2)})`;
  return `Finalized ${resultText(entry.result)}, token account ${entry.createdTokenAccount}`;
}
