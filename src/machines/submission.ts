import type { AckDepositVote, AckWithdrawVote, LandedTransaction } from '../chain/bridge-chains.js';
import type { PlannedVote } from './crank-events.js';
import type { CrankStep } from './crank-types.js';
import type { CyclePlan } from './planning/cycle-plan.js';

/** What a step hands the submit actor and what it gets back: the machine's one effect of writing. */

/** What the submit actor sends, per step. */
export type Submission =
  | { step: 'ack_deposit'; votes: AckDepositVote[] }
  | { step: 'ack_withdraw'; votes: AckWithdrawVote[] }
  | { step: 'cleanup'; indices: number[] };

/** What the submit actor reports, the same shape for every step. */
export interface ActionReport {
  transactions: LandedTransaction[];
  /** cleanup_deposit only: entries this server cleaned up. */
  completed: number[];
  /** cleanup_deposit only: entries someone else had cleaned up already. */
  alreadyDone: number[];
}

/** The step's work in the plan, as the submit actor takes it. */
export function submissionFor(step: CrankStep, plan: CyclePlan | null): Submission {
  switch (step) {
    case 'ack_deposit':
      return { step, votes: plan?.ackDeposit.votes ?? [] };
    case 'ack_withdraw':
      return { step, votes: plan?.ackWithdraw.votes.map((planned) => planned.vote) ?? [] };
    case 'cleanup':
      return { step, indices: plan?.cleanup.indices ?? [] };
  }
}

export function plannedVotes(submission: Submission): PlannedVote[] {
  return submission.step === 'cleanup' ? [] : submission.votes.map(({ index, approve }) => ({ index, approve }));
}

export function submittedIndices(submission: Submission): number[] {
  return submission.step === 'cleanup' ? submission.indices : submission.votes.map((vote) => vote.index);
}
