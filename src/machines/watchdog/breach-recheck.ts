import type { EndpointAnswers, TrackerAnswer } from '../../chain/port/bridge-watch.js';
import type { ChainSide } from '../../domain.js';
import { entryBreaches, headerBreaches, ownBit, type Breach, type TrackerBaseline } from './invariants.js';

/**
 * The re-check of a breach candidate, pure: the same invariant over the finalized records of
 * every endpoint in service. A breach is confirmed only when every pair of answers (one per
 * chain) at or past the slots of the view that raised it shows it, and at least two endpoints
 * of each chain answered (one, where only one is configured: nothing to corroborate it with).
 * One answer at or past those slots that does not show it refutes it: a lying or lagging node
 * raised it. Answers older than the view's slots decide nothing yet (finalized trails confirmed).
 */

export interface Candidate {
  breach: Breach;
  /** The slots of the view that raised it, per chain. */
  slots: Record<ChainSide, number>;
  /** For a header breach: the baseline it was judged against. */
  baseline?: TrackerBaseline;
  /** When it was first seen (ms, the process clock). */
  seenAtMs: number;
}

export type Verdict = 'confirmed' | 'refuted' | 'pending';

export function judge(candidate: Candidate, answers: Record<ChainSide, EndpointAnswers<TrackerAnswer>>, authority: string): Verdict {
  const { breach } = candidate;
  const witnesses = { source: decisive(answers.source, candidate.slots.source), target: decisive(answers.target, candidate.slots.target) };
  if (breach.index === null) {
    const chain = breach.chain;
    const shown = witnesses[chain].map((answer) => headerBreaches(chain, candidate.baseline, answer.header).some((one) => one.id === breach.id));
    return verdictOf(shown, required(answers[chain]), witnesses[chain].length);
  }
  const index = breach.index;
  const shown: boolean[] = [];
  for (const source of witnesses.source) {
    for (const target of witnesses.target) {
      const own = { source: ownBit(source.header, authority), target: ownBit(target.header, authority) };
      const generations = { source: source.header.generation, target: target.header.generation };
      const found = entryBreaches(index, source.deposits.get(index), target.withdrawals.get(index), own, generations);
      shown.push(found.some((one) => one.id === breach.id));
    }
  }
  const enough = Math.min(witnesses.source.length - required(answers.source), witnesses.target.length - required(answers.target)) >= 0;
  if (shown.includes(false)) return 'refuted';
  return enough && shown.length > 0 ? 'confirmed' : 'pending';
}

/** The answers that may decide: at or past the view's slot. */
function decisive(answers: EndpointAnswers<TrackerAnswer>, slot: number): TrackerAnswer[] {
  return answers.answers.filter((answer) => answer.slot >= slot);
}

/** Witnesses a chain must have: two, or its only endpoint. */
function required(answers: EndpointAnswers<TrackerAnswer>): number {
  return Math.min(2, Math.max(1, answers.endpoints));
}

function verdictOf(shown: boolean[], needed: number, witnesses: number): Verdict {
  if (shown.includes(false)) return 'refuted';
  return witnesses >= needed ? 'confirmed' : 'pending';
}
