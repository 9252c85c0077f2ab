import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BridgeView, TrackerWindow } from '../../src/chain/port/bridge-chains.js';
import type { EndpointAnswers, TrackerAnswer } from '../../src/chain/port/bridge-watch.js';
import type { DepositEntry, DepositResult, TrackerHeader, WithdrawEntry } from '../../src/chain/types.js';
import { judge } from '../../src/machines/watchdog/breach-recheck.js';
import { isCritical, raiseBaseline, viewBreaches, type Baselines, type InvariantName } from '../../src/machines/watchdog/invariants.js';
import { AUTHORITY, deposit, trackerHeader, withdrawal } from '../../test/machines/support/bridge-view.js';
import { checkProperty, propertyProfile } from '../support/profile.js';

/**
 * The watchdog's invariants (issue 50) over random honest runs of an abstract bridge: deposits,
 * honest proposals finalized with the program's results, a dishonest proposal voted down (a
 * threshold no: entry_count and positions rewound, never below settled_prefix), relays, cleanups
 * and governance resets, each cycle seen through a random window. No run raises a critical
 * breach; an injected breach (a finalized mismatch, a relayed result that differs, a finalized
 * yes against this authority's no, this authority's no standing on a proposal it should approve
 * on either chain, a rewound counter) is always found, naming its entry; and a
 * breach that only one lying endpoint shows is never confirmed by the finalized re-check.
 */

const RUNS = propertyProfile() === 'long' ? 5_000 : 1_000;
const OWN = 1; // AUTHORITY holds slot 0.

interface Model {
  deposits: DepositEntry[];
  withdrawals: WithdrawEntry[];
  source: TrackerHeader;
  target: TrackerHeader;
}

type Step =
  | { kind: 'deposit'; amount: bigint }
  | { kind: 'finalize'; partial: boolean; reject: boolean }
  | { kind: 'threshold_no' }
  | { kind: 'relay' }
  | { kind: 'cleanup' }
  | { kind: 'governance' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.bigInt(1n, 1_000n).map((amount) => ({ kind: 'deposit' as const, amount })),
  fc.record({ partial: fc.boolean(), reject: fc.boolean() }).map((choice) => ({ kind: 'finalize' as const, ...choice })),
  fc.constant({ kind: 'threshold_no' as const }),
  fc.constant({ kind: 'relay' as const }),
  fc.constant({ kind: 'cleanup' as const }),
  fc.constant({ kind: 'governance' as const }),
);

function emptyModel(): Model {
  return {
    deposits: [],
    withdrawals: [],
    source: trackerHeader('DepositTracker', { entryCount: 0, ownNext: 0 }),
    target: trackerHeader('WithdrawTracker', { entryCount: 0, ownNext: 0 }),
  };
}

function setOwnNext(header: TrackerHeader, next: number): void {
  header.votes = header.votes.map((vote, slot) => (slot === 0 ? { ...vote, nextIndex: BigInt(next) } : vote));
}

/** One honest step of the bridge, as the program and honest authorities make it. */
function apply(model: Model, s: Step): void {
  const { deposits, withdrawals, source, target } = model;
  const count = Number(target.entryCount);
  switch (s.kind) {
    case 'deposit':
      deposits.push(deposit(deposits.length, { amount: s.amount }));
      source.entryCount = BigInt(deposits.length);
      return;
    case 'finalize': {
      // The next entry: proposed with the deposit's data and finalized in order with the program's result.
      if (count >= deposits.length) return;
      const d = deposits[count]!;
      const result: DepositResult = s.reject
        ? { kind: 'Rejected', reason: 'TokenPairFrozen' }
        : { kind: 'Confirmed', amount: s.partial ? (d.amount + 1n) / 2n : d.amount };
      withdrawals[count] = withdrawal(d, {
        status: 'Finalized',
        yesVotes: OWN | 2,
        result,
        createdTokenAccount: s.reject ? 'NotRequired' : 'Created',
      });
      target.entryCount = BigInt(count + 1);
      target.settledPrefix = BigInt(count + 1);
      setOwnNext(target, count + 1);
      return;
    }
    case 'threshold_no': {
      // A dishonest proposal at entry_count, voted down: removed, entry_count and positions back to it.
      if (count >= deposits.length) return;
      setOwnNext(target, Math.min(Number(target.votes[0]!.nextIndex), count));
      return;
    }
    case 'relay': {
      const i = deposits.findIndex((d) => d.status !== 'Finalized');
      if (i < 0 || withdrawals[i]?.status !== 'Finalized') return;
      deposits[i] = { ...deposits[i]!, status: 'Finalized', proposed: withdrawals[i].result, result: withdrawals[i].result, yesVotes: OWN | 2 };
      setOwnNext(source, i + 1);
      return;
    }
    case 'cleanup': {
      const i = Number(source.settledPrefix);
      if (deposits[i]?.status !== 'Finalized') return;
      deposits[i] = { ...deposits[i]!, cleanupCompleted: true };
      source.settledPrefix = BigInt(i + 1);
      return;
    }
    case 'governance':
      // set_token_pair: nothing pending on the destination here (every entry is finalized), generation + 1.
      target.generation += 1n;
      return;
  }
}

/** The view one cycle reads: both headers, and the entries of a random window. */
function viewOf(model: Model, from: number, length: number): BridgeView {
  const window = <E>(entries: E[], header: TrackerHeader): TrackerWindow<E> => ({
    header: structuredClone(header),
    entries: new Map(
      entries.flatMap((entry, index) => (index >= from && index < from + length ? [[index, structuredClone(entry)] as [number, E]] : [])),
    ),
  });
  return {
    authority: AUTHORITY,
    deposits: window(model.deposits, model.source),
    withdrawals: window(model.withdrawals, model.target),
    slots: { source: 100, target: 100 },
  };
}

const run = fc.record({ steps: fc.array(fc.tuple(step, fc.nat(20), fc.integer({ min: 1, max: 8 })), { minLength: 1, maxLength: 40 }) });

function critical(view: BridgeView, baselines: Partial<Baselines>): InvariantName[] {
  return viewBreaches(view, baselines)
    .filter((breach) => isCritical(breach.invariant))
    .map((breach) => breach.invariant);
}

function observe(baselines: Partial<Baselines>, view: BridgeView): void {
  baselines.source = raiseBaseline(baselines.source, view.deposits.header);
  baselines.target = raiseBaseline(baselines.target, view.withdrawals.header);
}

describe('the watchdog invariants on random honest runs', () => {
  it('raise no critical breach', async () => {
    await checkProperty(
      'no false breach',
      fc.asyncProperty(run, async ({ steps }) => {
        const model = emptyModel();
        const baselines: Partial<Baselines> = {};
        for (const [s, from, length] of steps) {
          apply(model, s);
          const view = viewOf(model, from % (model.deposits.length + 1), length);
          expect(critical(view, baselines)).toEqual([]);
          observe(baselines, view);
        }
      }),
      RUNS,
    );
  });

  it('find every injected breach, naming its entry', async () => {
    const injection = fc.constantFrom('mismatch', 'relayed', 'own_no', 'own_no_voting', 'own_no_relaying', 'rewound');
    await checkProperty(
      'injected breach found',
      fc.asyncProperty(run, injection, fc.nat(), async ({ steps }, kind, pick) => {
        const model = emptyModel();
        const baselines: Partial<Baselines> = {};
        for (const [s] of steps) {
          apply(model, s);
          observe(baselines, viewOf(model, 0, model.deposits.length));
        }
        for (const extra of [
          { kind: 'deposit', amount: 10n },
          { kind: 'finalize', partial: false, reject: false },
          { kind: 'relay' },
          { kind: 'cleanup' },
        ] as Step[])
          apply(model, extra);
        observe(baselines, viewOf(model, 0, model.deposits.length));
        const finalized = model.withdrawals.flatMap((entry, index) => (entry?.status === 'Finalized' ? [index] : []));
        const i = finalized[pick % finalized.length]!;
        let expected: { invariant: InvariantName; index: number | null };
        if (kind === 'mismatch') {
          model.withdrawals[i] = {
            ...model.withdrawals[i]!,
            amount: model.withdrawals[i]!.amount * 10n,
            result: { kind: 'Confirmed', amount: model.withdrawals[i]!.amount * 10n },
          };
          expected = { invariant: 'finalized_mismatch', index: i };
        } else if (kind === 'relayed') {
          const relayed = model.deposits.findIndex((d) => d.status === 'Finalized');
          model.deposits[relayed] = {
            ...model.deposits[relayed]!,
            result: { kind: 'Rejected', reason: 'InternalError' },
            proposed: { kind: 'Rejected', reason: 'InternalError' },
          };
          expected = { invariant: 'relayed_result_mismatch', index: relayed };
        } else if (kind === 'own_no') {
          model.withdrawals[i] = { ...model.withdrawals[i]!, yesVotes: 2 | 4, noVotes: OWN };
          expected = { invariant: 'finalized_against_own_no', index: i };
        } else if (kind === 'own_no_voting') {
          // A no of this authority (signed before a reset) standing on the honest proposal of a new deposit.
          apply(model, { kind: 'deposit', amount: 7n });
          const next = Number(model.target.entryCount);
          model.withdrawals[next] = withdrawal(model.deposits[next]!, { status: 'Voting', yesVotes: 2, noVotes: OWN });
          model.target.entryCount = BigInt(next + 1);
          expected = { invariant: 'own_no_on_matching_proposal', index: next };
        } else if (kind === 'own_no_relaying') {
          // The same on the source: this authority's no on a proposal equal to the destination's Finalized result.
          model.deposits[i] = { ...model.deposits[i]!, status: 'Relaying', proposed: model.withdrawals[i]!.result, yesVotes: 2, noVotes: OWN };
          expected = { invariant: 'own_no_on_matching_proposal', index: i };
        } else {
          model.target.settledPrefix -= 1n;
          expected = { invariant: 'tracker_rewound', index: null };
        }
        const found = viewBreaches(viewOf(model, 0, model.deposits.length), baselines).map((breach) => ({
          invariant: breach.invariant,
          index: breach.index,
        }));
        expect(found).toContainEqual(expected);
      }),
      RUNS,
    );
  });

  it('never confirm a breach only one lying endpoint shows', async () => {
    await checkProperty(
      'one liar refuted',
      fc.asyncProperty(fc.bigInt(1n, 1_000n), fc.integer({ min: 2, max: 4 }), fc.nat(3), async (amount, endpoints, liarAt) => {
        const d = deposit(0, { amount });
        const honest = withdrawal(d, { status: 'Finalized', yesVotes: 2 | 4, result: { kind: 'Confirmed', amount } });
        const lie = { ...honest, amount: amount * 10n, result: { kind: 'Confirmed' as const, amount: amount * 10n } };
        const header = (kind: 'DepositTracker' | 'WithdrawTracker') =>
          trackerHeader(kind, { entryCount: 1, ownNext: 1, settledPrefix: kind === 'WithdrawTracker' ? 1 : 0 });
        const answer = (endpoint: string, entry: WithdrawEntry): TrackerAnswer => ({
          endpoint,
          slot: 200,
          header: header('WithdrawTracker'),
          deposits: new Map(),
          withdrawals: new Map([[0, entry]]),
        });
        const target: EndpointAnswers<TrackerAnswer> = {
          endpoints,
          answers: Array.from({ length: endpoints }, (_, k) => answer(`e${k}`, k === liarAt % endpoints ? lie : honest)),
        };
        const source: EndpointAnswers<TrackerAnswer> = {
          endpoints,
          answers: Array.from({ length: endpoints }, (_, k) => ({
            endpoint: `e${k}`,
            slot: 200,
            header: header('DepositTracker'),
            deposits: new Map([[0, d]]),
            withdrawals: new Map(),
          })),
        };
        const view = viewOf({ deposits: [d], withdrawals: [lie], source: header('DepositTracker'), target: header('WithdrawTracker') }, 0, 1);
        const [breach] = viewBreaches(view, {});
        expect(breach?.invariant).toBe('finalized_mismatch');
        expect(judge({ breach: breach!, slots: { source: 100, target: 100 }, seenAtMs: 0 }, { source, target }, AUTHORITY)).toBe('refuted');
      }),
      RUNS,
    );
  });
});
