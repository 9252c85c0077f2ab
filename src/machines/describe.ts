import { STEP_ACTIONS, type CrankStep } from './crank-types.js';
import type { ActionReport } from './submission.js';

/**
 * The human-readable `crank.last_action` lines, e.g. "ack_deposit 120..129 (10 votes)",
 * "cleanup_deposit 4 entries (1 already done)", "ack_withdraw 7 (1 vote) failed after 3 attempts",
 * and in a dry run "dry run: ack_deposit 120..129 (10 votes) planned, not submitted".
 */

export function describeLanded(step: CrankStep, indices: readonly number[], report: ActionReport): string {
  const head = describeSubmission(step, indices);
  const alreadyDone = report.alreadyDone.length;
  return step === 'cleanup' && alreadyDone > 0 ? `${head} (${alreadyDone} already done)` : head;
}

export function describeFailed(step: CrankStep, indices: readonly number[], attempts: number): string {
  return `${describeSubmission(step, indices)} failed after ${plural(attempts, 'attempt')}`;
}

/** Dry run: "dry run: ack_deposit 120..129 (10 votes) planned, not submitted". */
export function describePlanned(step: CrankStep, indices: readonly number[]): string {
  return `dry run: ${describeSubmission(step, indices)} planned, not submitted`;
}

function describeSubmission(step: CrankStep, indices: readonly number[]): string {
  const action = STEP_ACTIONS[step];
  if (indices.length === 0) return action;
  if (step === 'cleanup') return `${action} ${plural(indices.length, 'entry', 'entries')}`;
  return `${action} ${describeRange(indices)} (${plural(indices.length, 'vote')})`;
}

/** Votes are consecutive by construction: "120..129", or "120" for one. */
function describeRange(indices: readonly number[]): string {
  const first = indices[0];
  const last = indices[indices.length - 1];
  return first === last ? `${first}` : `${first}..${last}`;
}

function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}
