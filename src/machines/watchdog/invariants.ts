import type { BridgeView } from '../../chain/port/bridge-chains.js';
import type { DepositEntry, DepositResult, TrackerHeader, WithdrawEntry } from '../../chain/types.js';
import type { ChainSide } from '../../domain.js';
import { sameDepositResult } from '../planning/cycle-plan.js';

/**
 * The watchdog's invariants over what the bridge finalizes (docs/operating.md "The watchdog"),
 * pure: each is a function of records the crank already read, so the same function judges the
 * cycle's view (a candidate) and the finalized records every endpoint answers (the re-check,
 * ./breach-recheck.ts). PROTOCOL.md "How an honest authority votes" is the rule each one
 * holds the bridge to.
 */

export type InvariantName =
  /** A destination entry Finalized Confirmed whose transfer differs from its deposit, or that confirms more than was deposited. */
  | 'finalized_mismatch'
  /** An entry finalized yes while this authority's own vote on it is no. */
  | 'finalized_against_own_no'
  /** This authority's no on a proposal it should approve, still under vote: signed before a governance reset, or by another signer of its key. */
  | 'own_no_on_matching_proposal'
  /** A source result that differs from the destination result it relays. */
  | 'relayed_result_mismatch'
  /** entry_count, settled_prefix or a next_index below what the bridge already settled, without a generation change. */
  | 'tracker_rewound'
  /** The authority set or the threshold of a tracker changed: no instruction of the program does that. */
  | 'authority_set_changed'
  /** The generation rose: governance reset pending work (set_token_pair, reset_pending). Reported, never a halt. */
  | 'governance_change';

export const INVARIANTS: readonly InvariantName[] = [
  'finalized_mismatch',
  'finalized_against_own_no',
  'own_no_on_matching_proposal',
  'relayed_result_mismatch',
  'tracker_rewound',
  'authority_set_changed',
  'governance_change',
];

/** Critical breaches page and, with BRIDGE_ON_INVARIANT_BREACH=halt, stop votes; a notice is a warn line and the counter. */
export function isCritical(invariant: InvariantName): boolean {
  return invariant !== 'governance_change';
}

/** One broken invariant: what the bridge shows against what it should show, on which records. */
export interface Breach {
  /** Stable for the same fact (the operator acknowledges it by this id): invariant, chain, entry or field, generation. */
  id: string;
  invariant: InvariantName;
  chain: ChainSide;
  /** The entry it names; null for a header's counters. */
  index: number | null;
  /** What the bridge finalized or shows. */
  bridge: string;
  /** What an honest bridge holds there: the other side, or the earlier value. */
  expected: string;
}

/** The header facts a rewind is judged against: the highest corroborated counters seen, and the set they belong to. */
export interface TrackerBaseline {
  generation: bigint;
  settledPrefix: bigint;
  entryCount: bigint;
  /** Each authority's highest next_index, by slot. */
  nextIndex: readonly bigint[];
  threshold: number;
  authorities: readonly string[];
}

export type Baselines = Record<ChainSide, TrackerBaseline>;

function baselineOf(header: TrackerHeader): TrackerBaseline {
  return {
    generation: header.generation,
    settledPrefix: header.settledPrefix,
    entryCount: header.entryCount,
    nextIndex: header.votes.map((vote) => vote.nextIndex),
    threshold: header.threshold,
    authorities: [...header.authorities],
  };
}

/**
 * The baseline after a corroborated header: the highest counters within one generation; a new
 * generation or authority set starts afresh (its change is reported by headerBreaches).
 */
export function raiseBaseline(baseline: TrackerBaseline | undefined, header: TrackerHeader): TrackerBaseline {
  const next = baselineOf(header);
  if (baseline === undefined || baseline.generation !== header.generation || !sameSet(baseline, next)) return next;
  return {
    ...next,
    settledPrefix: max(baseline.settledPrefix, next.settledPrefix),
    entryCount: max(baseline.entryCount, next.entryCount),
    nextIndex: next.nextIndex.map((value, slot) => max(baseline.nextIndex[slot] ?? 0n, value)),
  };
}

/** Every breach one view shows: its entries where both sides were read, its headers against the baselines. */
export function viewBreaches(view: BridgeView, baselines: Partial<Baselines>): Breach[] {
  const breaches: Breach[] = [];
  const sourceGeneration = view.deposits.header.generation;
  const targetGeneration = view.withdrawals.header.generation;
  const own = { source: ownBit(view.deposits.header, view.authority), target: ownBit(view.withdrawals.header, view.authority) };
  for (const [index, withdrawal] of view.withdrawals.entries) {
    breaches.push(...entryBreaches(index, view.deposits.entries.get(index), withdrawal, own, { source: sourceGeneration, target: targetGeneration }));
  }
  for (const [index, deposit] of view.deposits.entries) {
    if (!view.withdrawals.entries.has(index))
      breaches.push(...entryBreaches(index, deposit, undefined, own, { source: sourceGeneration, target: targetGeneration }));
  }
  breaches.push(...headerBreaches('source', baselines.source, view.deposits.header));
  breaches.push(...headerBreaches('target', baselines.target, view.withdrawals.header));
  return breaches;
}

/** This authority's bit in a tracker's vote masks; 0 when it is not in the set (the read fails elsewhere then). */
export function ownBit(header: TrackerHeader, authority: string): number {
  const slot = header.authorities.indexOf(authority);
  return slot < 0 ? 0 : 1 << slot;
}

/**
 * The entry invariants on entry `index`: either side may be missing (not read, or not yet
 * there), and each invariant needs only the sides it compares.
 */
export function entryBreaches(
  index: number,
  deposit: DepositEntry | undefined,
  withdrawal: WithdrawEntry | undefined,
  own: Record<ChainSide, number>,
  generations: Record<ChainSide, bigint>,
): Breach[] {
  const breaches: Breach[] = [];
  const at = (invariant: InvariantName, chain: ChainSide, bridge: string, expected: string): Breach => ({
    id: `${invariant}:${chain}:${index}:g${generations[chain]}`,
    invariant,
    chain,
    index,
    bridge,
    expected,
  });
  const bothFinalized = deposit !== undefined && withdrawal?.status === 'Finalized';
  const mismatch = bothFinalized && withdrawal.result.kind === 'Confirmed' && !confirmsDeposit(withdrawal, deposit);
  const relayMismatch = bothFinalized && deposit.status === 'Finalized' && !sameDepositResult(deposit.result, withdrawal.result);
  if (mismatch) {
    breaches.push(
      at(
        'finalized_mismatch',
        'target',
        transferText(withdrawal.amount, withdrawal.recipient, withdrawal.sourceMint, withdrawal.result),
        transferText(deposit.amount, deposit.recipient, deposit.sourceMint),
      ),
    );
  }
  if (relayMismatch) {
    breaches.push(
      at('relayed_result_mismatch', 'source', `source result ${resultText(deposit.result)}`, `destination result ${resultText(withdrawal.result)}`),
    );
  }
  // Where the entry's data already names the breach, this authority's no is that same fact (it
  // voted no because of it): one line per fact, so only a no against matching data is its own.
  if (!mismatch && withdrawal?.status === 'Finalized' && (withdrawal.noVotes & own.target) !== 0) {
    breaches.push(
      at(
        'finalized_against_own_no',
        'target',
        `Finalized ${resultText(withdrawal.result)} with yes votes ${maskText(withdrawal.yesVotes)}`,
        'this authority voted no',
      ),
    );
  }
  if (!relayMismatch && deposit?.status === 'Finalized' && (deposit.noVotes & own.source) !== 0) {
    breaches.push(
      at(
        'finalized_against_own_no',
        'source',
        `Finalized ${resultText(deposit.result)} with yes votes ${maskText(deposit.yesVotes)}`,
        'this authority voted no',
      ),
    );
  }
  breaches.push(...ownNoBreaches(deposit, withdrawal, own, at));
  return breaches;
}

/**
 * This authority's no on a proposal still under vote that equals what it should approve: the
 * destination's proposal carrying the deposit's transfer, or the source's proposed result equal
 * to the destination's Finalized result. An honest crank never signs one at the generation it
 * reads (neither side's data changes while the entry stands, and a threshold no clears the
 * votes), so the no was signed before a governance reset and landed after it on the proposal
 * that replaced the old one (a vote names no generation), or another signer holds this key.
 * Either way the transfer waits for the other authorities' yes: this authority cannot take it back.
 */
function ownNoBreaches(
  deposit: DepositEntry | undefined,
  withdrawal: WithdrawEntry | undefined,
  own: Record<ChainSide, number>,
  at: (invariant: InvariantName, chain: ChainSide, bridge: string, expected: string) => Breach,
): Breach[] {
  const breaches: Breach[] = [];
  const votes = (entry: { yesVotes: number; noVotes: number }) => `yes votes ${maskText(entry.yesVotes)}, no votes ${maskText(entry.noVotes)}`;
  if (deposit !== undefined && withdrawal?.status === 'Voting' && (withdrawal.noVotes & own.target) !== 0 && carriesDeposit(withdrawal, deposit)) {
    breaches.push(
      at(
        'own_no_on_matching_proposal',
        'target',
        `Voting ${transferText(withdrawal.amount, withdrawal.recipient, withdrawal.sourceMint)} with this authority's no (${votes(withdrawal)})`,
        'this authority approves a proposal equal to its source entry',
      ),
    );
  }
  if (
    deposit?.status === 'Relaying' &&
    withdrawal?.status === 'Finalized' &&
    (deposit.noVotes & own.source) !== 0 &&
    sameDepositResult(deposit.proposed, withdrawal.result)
  ) {
    breaches.push(
      at(
        'own_no_on_matching_proposal',
        'source',
        `Relaying ${resultText(deposit.proposed)} with this authority's no (${votes(deposit)})`,
        `this authority approves the destination result ${resultText(withdrawal.result)}`,
      ),
    );
  }
  return breaches;
}

/** A destination entry proposes exactly the deposit's transfer (amount, recipient, source_mint). */
function carriesDeposit(withdrawal: WithdrawEntry, deposit: DepositEntry): boolean {
  return withdrawal.amount === deposit.amount && withdrawal.recipient === deposit.recipient && withdrawal.sourceMint === deposit.sourceMint;
}

/** A Confirmed destination entry carries exactly the deposit's transfer and confirms at most its amount. */
function confirmsDeposit(withdrawal: WithdrawEntry, deposit: DepositEntry): boolean {
  const confirmed = withdrawal.result.kind === 'Confirmed' ? withdrawal.result.amount : 0n;
  return carriesDeposit(withdrawal, deposit) && confirmed <= deposit.amount;
}

/**
 * A header against its baseline. Within one generation the program only lowers entry_count
 * and next_index on a threshold no, and never below settled_prefix (entries below it are
 * Finalized; the source's are cleaned up too), nor a next_index below where it was: anything
 * below that, or a settled_prefix that falls, is a rewind. The source's entry_count never falls at all (a
 * threshold no there returns entries to Initialized).
 */
export function headerBreaches(chain: ChainSide, baseline: TrackerBaseline | undefined, header: TrackerHeader): Breach[] {
  if (baseline === undefined) return [];
  if (!sameSet(baseline, baselineOf(header))) {
    const shown = `threshold ${header.threshold} of [${header.authorities.join(', ')}]`;
    const was = `threshold ${baseline.threshold} of [${baseline.authorities.join(', ')}]`;
    return [
      {
        id: `authority_set_changed:${chain}:g${header.generation}`,
        invariant: 'authority_set_changed',
        chain,
        index: null,
        bridge: shown,
        expected: was,
      },
    ];
  }
  if (header.generation !== baseline.generation) {
    return [
      {
        id: `governance_change:${chain}:g${header.generation}`,
        invariant: 'governance_change',
        chain,
        index: null,
        bridge: `generation ${header.generation}`,
        expected: `generation ${baseline.generation}`,
      },
    ];
  }
  const rewound: string[] = [];
  if (header.settledPrefix < baseline.settledPrefix) rewound.push(`settled_prefix ${header.settledPrefix} < ${baseline.settledPrefix}`);
  const countFloor = chain === 'source' ? baseline.entryCount : baseline.settledPrefix;
  if (header.entryCount < countFloor) rewound.push(`entry_count ${header.entryCount} < ${countFloor}`);
  // An authority that has not voted yet may sit below settled_prefix (the others finalized
  // without it); a threshold no lowers a position to the entry voted down, never below that.
  header.votes.forEach((vote, slot) => {
    const was = baseline.nextIndex[slot] ?? 0n;
    const floor = was < baseline.settledPrefix ? was : baseline.settledPrefix;
    if (vote.nextIndex < floor) rewound.push(`authority ${slot} next_index ${vote.nextIndex} < ${floor}`);
  });
  if (rewound.length === 0) return [];
  return [
    {
      id: `tracker_rewound:${chain}:g${header.generation}:s${baseline.settledPrefix}`,
      invariant: 'tracker_rewound',
      chain,
      index: null,
      bridge: rewound.join(', '),
      expected: `settled_prefix ${baseline.settledPrefix}, entry_count ${baseline.entryCount} or more (generation ${baseline.generation})`,
    },
  ];
}

function sameSet(a: Pick<TrackerBaseline, 'threshold' | 'authorities'>, b: Pick<TrackerBaseline, 'threshold' | 'authorities'>): boolean {
  return a.threshold === b.threshold && a.authorities.length === b.authorities.length && a.authorities.every((key, k) => key === b.authorities[k]);
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/** A result as breach lines and the property tests' findings name it: `Confirmed(70)`, `Rejected(Denylisted)`. */
export function resultText(result: DepositResult): string {
  switch (result.kind) {
    case 'None':
      return 'None';
    case 'Confirmed':
      return `Confirmed(${result.amount})`;
    case 'Rejected':
      return `Rejected(${result.reason})`;
  }
}

function transferText(amount: bigint, recipient: string, sourceMint: string, result?: DepositResult): string {
  const base = `amount ${amount}, recipient ${recipient}, source_mint ${sourceMint}`;
  return result === undefined ? base : `${resultText(result)}: ${base}`;
}

function maskText(mask: number): string {
  return `0b${mask.toString(2)}`;
}
