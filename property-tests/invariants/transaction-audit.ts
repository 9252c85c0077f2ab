import { depositResultFromArg, type InstructionOf } from '../../src/chain/codec/instructions.js';
import type { DepositEntry, TrackerHeader, WithdrawEntry } from '../../src/chain/types.js';
import type { ChainSide, LedgerRecord } from '../system/ledger.js';
import type { BridgeState } from '../system/snapshot.js';
import { resultText } from '../../src/machines/watchdog/invariants.js';
import { isRelayable, sameResult, sameTransfer } from './state-checks.js';

/**
 * Invariants about what each landed transaction did, checked on the ledger's before and after
 * states of that one transaction.
 *
 * Entry instances (invariant 4). A vote is for an entry *instance*, identified by
 * (chain, generation, index, proposal epoch): the epoch counts the proposals that landed at that
 * index (an ack_deposit at index = entry_count on the destination; an ack_withdraw on an
 * Initialized deposit on the source). A threshold no does not bump the generation, but the
 * entries it removes or resets need a new proposal before anyone can vote on them again, so the
 * re-proposed entry is a new instance; a governance reset bumps the generation as well.
 * One exception is legitimate: a threshold no (or reset_pending) at index j rewinds positions
 * below a source entry i > j that stays Finalized (the source has no ordering constraint), and
 * every authority must vote on i again to get past it. Such a late re-vote changes nothing but
 * a bit already set. So an authority may vote twice on an instance only in two different
 * position passes (a rewind of its next_index to at most i between the votes), and only when
 * the later vote is a late vote on a Finalized entry.
 */

export interface Coverage {
  wrongProposals: number;
  thresholdNo: number;
  governanceResets: number;
  lateRevotes: number;
  staleAcrossReset: number;
  relays: number;
  cleanups: number;
  failedTransactions: number;
}

interface CastVote {
  chain: ChainSide;
  authority: string;
  index: number;
  approve: boolean;
  proposal: boolean;
}

type Vote = InstructionOf<'ack_deposit'> | InstructionOf<'ack_withdraw'>;

/** Every count at 0: an audit's start, and a run's summary before its sequences add theirs. */
export function noCoverage(): Coverage {
  return {
    wrongProposals: 0,
    thresholdNo: 0,
    governanceResets: 0,
    lateRevotes: 0,
    staleAcrossReset: 0,
    relays: 0,
    cleanups: 0,
    failedTransactions: 0,
  };
}

export class TransactionAudit {
  readonly coverage: Coverage = noCoverage();
  /** The honest nos that landed after a reset they were sent before, in landing order (honestOrStale). */
  readonly staleNos: Array<{ chain: ChainSide; index: number; signature: string }> = [];
  private readonly epochs = new Map<string, number>();
  /** The instance each index currently holds (its latest proposal). */
  private readonly currentInstance = new Map<string, string>();
  private readonly votes = new Map<string, Array<{ pass: number; late: boolean; seq: number }>>();
  /** Per chain and authority: the positions its next_index was rewound to, in order. */
  private readonly rewinds = new Map<string, number[]>();
  /** Per chain and authority: where its next vote must be, if votes go in index order. */
  private readonly nextVote = new Map<string, number>();
  private readonly cleanupCount = new Map<number, number>();
  private readonly wrongInstances = new Set<string>();
  /** Per chain, honest authority, index and position pass: the ledger entry whose executed transaction counted that vote. */
  private readonly counted = new Map<string, number>();

  constructor(
    /** The honest authorities and the cap on each one's priority fee (micro-lamports per CU). */
    private readonly honest: ReadonlyMap<string, number>,
    private readonly names: ReadonlyMap<string, string>,
  ) {}

  audit(record: LedgerRecord): string[] {
    const honest = this.honest.get(record.feePayer);
    const own = honest === undefined ? [] : [...this.carriedTwice(record), ...withinFeeCap(record, honest, this.name(record.feePayer))];
    if (record.err !== null) {
      this.coverage.failedTransactions += 1;
      return honest === undefined ? [] : [...own, ...duplicateVotes(record, this.name(record.feePayer))];
    }
    const problems = [...own, ...this.votesOf(record), ...this.cleanupsOf(record), ...monotone(record), ...finalizedAtTheMoment(record)];
    this.recordRewinds(record);
    return problems;
  }

  /** 5. No finalized entry is an instance that a wrong proposal created. */
  wrongProposalsFinalized(state: BridgeState): string[] {
    const problems: string[] = [];
    const check = (chain: ChainSide, index: number) => {
      const instance = this.currentInstance.get(`${chain}:${index}`);
      if (instance !== undefined && this.wrongInstances.has(instance))
        problems.push(`5: ${instance} was created by a wrong proposal and is Finalized`);
    };
    for (const [index, entry] of state.source.entries.entries()) if (entry.status === 'Finalized') check('source', index);
    for (const [index, entry] of state.target.entries.entries()) if (entry.status === 'Finalized') check('target', index);
    return problems;
  }

  private votesOf(record: LedgerRecord): string[] {
    const problems: string[] = [];
    const authority = record.feePayer;
    for (const ix of record.instructions) {
      if (ix.name !== 'ack_deposit' && ix.name !== 'ack_withdraw') continue;
      const index = Number(ix.index);
      const proposal = isProposal(record, ix);
      const vote: CastVote = { chain: record.chain, authority, index, approve: ix.approve, proposal };
      const instance = this.instanceOf(record, vote);
      if (proposal && this.isWrongProposal(record.before, ix)) {
        this.wrongInstances.add(instance);
        this.coverage.wrongProposals += 1;
      }
      problems.push(...this.inOrder(vote, record.seq), ...this.once(vote, instance, record));
      if (this.honest.has(authority)) problems.push(...this.honestOrStale(record, ix, vote));
      if (ix.name === 'ack_withdraw') this.coverage.relays += 1;
    }
    return problems.map((problem) => `${problem} (transaction ${record.signature}, ${this.name(authority)})`);
  }

  /**
   * 4, for a no that landed after a governance reset it was first sent before: the program takes
   * a no at the voter's rewound position whatever the entry now holds (a vote names no
   * generation), so a no cast on a wrong proposal can land on the honest one that replaced it,
   * and one an earlier life sent cannot even be voided by the next. It is judged on the view it
   * was cast on, and counted (`staleAcrossReset`): the entry then lacks that authority's yes
   * until governance resets it again (liveness.ts).
   */
  private honestOrStale(record: LedgerRecord, ix: Vote, vote: CastVote): string[] {
    const who = this.name(record.feePayer);
    const problems = honestVote(record.before, ix, vote, who);
    if (problems.length === 0 || ix.approve) return problems;
    const reset = headerOf(record.before, record.chain).generation > headerOf(record.sent, record.chain).generation;
    if (!reset || honestVote(record.sent, ix, vote, who).length > 0) return problems;
    this.coverage.staleAcrossReset += 1;
    this.staleNos.push({ chain: record.chain, index: vote.index, signature: record.signature });
    return [];
  }

  /**
   * 10. A vote is carried by one landed transaction: once an executed transaction of an honest
   * authority counted its vote at an index, no other landed transaction of it (executed or
   * failed) carries a vote at that index in the same position pass. Two carriers mean two
   * versions of one vote were alive and both landed, which one nonce value per vote rules out.
   * A carrier that failed counted nothing, so a re-sign after it is a new decision.
   */
  private carriedTwice(record: LedgerRecord): string[] {
    return record.instructions.flatMap((ix) => {
      if (ix.name !== 'ack_deposit' && ix.name !== 'ack_withdraw') return [];
      const index = Number(ix.index);
      const key = `${record.chain}|${record.feePayer}|${index}|${this.passOf(record.chain, record.feePayer, index)}`;
      const first = this.counted.get(key);
      if (record.err === null && first === undefined) this.counted.set(key, record.seq);
      if (first === undefined) return [];
      return [
        `10: ${this.name(record.feePayer)}'s ${ix.name} ${index} on the ${record.chain} chain is carried by transaction ${record.signature} (ledger #${record.seq}) and by ledger #${first}, which counted it: a vote carried by two landed transactions`,
      ];
    });
  }

  /** How many times the authority's position was rewound to at most `index`: votes at `index` in different passes are different votes. */
  private passOf(chain: ChainSide, authority: string, index: number): number {
    return (this.rewinds.get(`${chain}|${authority}`) ?? []).filter((to) => to <= index).length;
  }

  private instanceOf(record: LedgerRecord, vote: CastVote): string {
    const key = `${vote.chain}:${vote.index}`;
    if (vote.proposal) {
      const generation = headerOf(record.before, vote.chain).generation;
      const epoch = (this.epochs.get(key) ?? 0) + 1;
      this.epochs.set(key, epoch);
      this.currentInstance.set(key, `${vote.chain} entry ${vote.index} (generation ${generation}, proposal ${epoch})`);
    }
    return this.currentInstance.get(key) ?? `${vote.chain} entry ${vote.index} (never proposed)`;
  }

  private isWrongProposal(before: BridgeState, ix: Vote): boolean {
    const index = Number(ix.index);
    const deposit = before.source.entries[index];
    if (ix.name === 'ack_deposit') return deposit === undefined || !sameTransfer(ix, deposit);
    const withdrawal = before.target.entries[index];
    const result = depositResultFromArg(ix.result);
    // A result proposed before the destination finalized is judged by invariant 1 once it has.
    return withdrawal?.status === 'Finalized' && (result === undefined || !sameResult(result, withdrawal.result));
  }

  /** 2 and 4: an authority's votes go in index order, restarting only where a rewind put it. */
  private inOrder(vote: CastVote, seq: number): string[] {
    const key = `${vote.chain}|${vote.authority}`;
    const expected = this.nextVote.get(key) ?? 0;
    this.nextVote.set(key, vote.index + 1);
    if (vote.index === expected) return [];
    const invariant = vote.chain === 'source' ? '2' : '4';
    return [
      `${invariant}: ${vote.chain} vote at index ${vote.index} out of order: the previous vote (or rewind) left this authority at ${expected} (ledger #${seq})`,
    ];
  }

  /** 4: at most one vote per instance and position pass; a repeat only as a late vote. */
  private once(vote: CastVote, instance: string, record: LedgerRecord): string[] {
    const key = `${instance}|${vote.authority}`;
    const pass = this.passOf(vote.chain, vote.authority, vote.index);
    const late = entryOf(record.before, vote.chain, vote.index)?.status === 'Finalized';
    const earlier = this.votes.get(key) ?? [];
    this.votes.set(key, [...earlier, { pass, late, seq: record.seq }]);
    if (earlier.length === 0) return [];
    const samePass = earlier.find((cast) => cast.pass === pass);
    if (samePass !== undefined) return [`4: second vote on ${instance} in the same position pass (first in ledger #${samePass.seq})`];
    if (!late) return [`4: second vote on ${instance}, which is not Finalized (first in ledger #${earlier[0]!.seq})`];
    this.coverage.lateRevotes += 1;
    return [];
  }

  /** 3: cleanup_deposit succeeds at most once per entry. */
  private cleanupsOf(record: LedgerRecord): string[] {
    const problems: string[] = [];
    for (const ix of record.instructions) {
      if (ix.name !== 'cleanup_deposit') continue;
      const index = Number(ix.index);
      const count = (this.cleanupCount.get(index) ?? 0) + 1;
      this.cleanupCount.set(index, count);
      this.coverage.cleanups += 1;
      if (count > 1) problems.push(`3: deposit ${index} cleaned up ${count} times (transaction ${record.signature})`);
    }
    return problems;
  }

  /**
   * Positions the transaction moved back. The signer's own votes first move its position up
   * (to its last vote + 1), so its rewind shows against that, not against the position before.
   */
  private recordRewinds(record: LedgerRecord): void {
    const before = headerOf(record.before, record.chain);
    const after = headerOf(record.after, record.chain);
    const voted = record.instructions.flatMap((ix) => (ix.name === 'ack_deposit' || ix.name === 'ack_withdraw' ? [ix.index + 1n] : []));
    const rewound = after.votes.flatMap((vote, slot) => {
      const authority = after.authorities[slot]!;
      const reached = authority === record.feePayer && voted.length > 0 ? voted[voted.length - 1]! : before.votes[slot]!.nextIndex;
      return vote.nextIndex < reached ? [{ authority, to: Number(vote.nextIndex) }] : [];
    });
    if (after.generation > before.generation) this.coverage.governanceResets += 1;
    else if (rewound.length > 0) this.coverage.thresholdNo += 1;
    for (const { authority, to } of rewound) {
      const key = `${record.chain}|${authority}`;
      this.rewinds.set(key, [...(this.rewinds.get(key) ?? []), to]);
      this.nextVote.set(key, to);
    }
  }

  private name(key: string): string {
    return this.names.get(key) ?? key;
  }
}

function isProposal(record: LedgerRecord, ix: Vote): boolean {
  if (ix.name === 'ack_deposit') return ix.index >= record.before.target.header.entryCount;
  return record.before.source.entries[Number(ix.index)]?.status === 'Initialized';
}

/**
 * 9. An honest authority's transaction never lands carrying a vote the tracker had already
 * counted (an index below its next_index when the transaction landed): that is a second
 * version of a vote landing after the first, which nonce mode rules out and blockhash mode only
 * the program's position check caught (issue 31). A vote above next_index (a rewind while the
 * transaction was in flight) is a stale view, not a duplicate.
 */
function duplicateVotes(record: LedgerRecord, who: string): string[] {
  const tracker = record.chain === 'source' ? record.before.source : record.before.target;
  const slot = tracker.header.authorities.indexOf(record.feePayer);
  const next = tracker.header.votes[slot]?.nextIndex;
  if (next === undefined) return [];
  return record.instructions
    .filter((ix): ix is Vote => (ix.name === 'ack_deposit' || ix.name === 'ack_withdraw') && ix.index < next)
    .map(
      (ix) =>
        `9: ${who}'s transaction ${record.signature} landed with an error carrying ${ix.name} ${ix.index}, already counted (next_index ${next}): a vote sent twice`,
    );
}

/**
 * 11. Spend within the cap: an honest transaction bids at most the cap
 * (`BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS`), and one of n bridge instructions pays at most
 * 5,000 (its one signature) + ceil(cap × min(1,400,000, n × 200,000) / 10^6) lamports
 * (docs/chain-client.md, "Compute budget and priority fees", its lamports per transaction),
 * whatever the fee history said, until the chain refused a transaction for compute (nothing in
 * this model makes it: the costs never change). One of no bridge instruction is a void (it only
 * advances the crank's nonce: docs/chain-client.md, "Bounded in flight"), a 1,000-unit limit.
 */
function withinFeeCap(record: LedgerRecord, capMicroLamports: number, who: string): string[] {
  const cap = BigInt(capMicroLamports);
  const units = BigInt(
    record.instructions.length === 0 ? VOID_UNIT_LIMIT : Math.min(MAX_COMPUTE_UNITS, record.instructions.length * UNITS_PER_INSTRUCTION_CEILING),
  );
  const bound = LAMPORTS_PER_SIGNATURE + (cap * units + 999_999n) / 1_000_000n;
  const what = `${who}'s transaction ${record.signature} of ${record.instructions.length} bridge instruction(s)`;
  return [
    ...(record.unitPrice <= cap ? [] : [`11: ${what} bid ${record.unitPrice} micro-lamports/CU, above the cap of ${cap}`]),
    ...(record.fee <= bound ? [] : [`11: ${what} paid ${record.fee} lamports, above the cap's ${bound}`]),
  ];
}

const LAMPORTS_PER_SIGNATURE = 5_000n;
const MAX_COMPUTE_UNITS = 1_400_000;
const UNITS_PER_INSTRUCTION_CEILING = 200_000;
const VOID_UNIT_LIMIT = 1_000;

/**
 * 4 (and rule 3.1 for 2): an honest authority proposes exactly the source's data, approves
 * exactly the proposals that equal it, and relays only results rule 3.1 allows.
 */
function honestVote(before: BridgeState, ix: Vote, vote: CastVote, who: string): string[] {
  const deposit = before.source.entries[vote.index];
  const withdrawal = before.target.entries[vote.index];
  if (ix.name === 'ack_deposit') {
    if (deposit === undefined) return [`4: ${who} voted on destination entry ${vote.index}, which no deposit backs`];
    if (vote.proposal) return sameTransfer(ix, deposit) ? [] : [`4: ${who} proposed a transfer that differs from deposit ${vote.index}`];
    const right = withdrawal !== undefined && sameTransfer(withdrawal, deposit);
    return ix.approve === right
      ? []
      : [
          `4: ${who} voted ${ix.approve ? 'yes' : 'no'} on destination entry ${vote.index}, whose transfer ${right ? 'equals' : 'differs from'} the deposit`,
        ];
  }
  if (!isRelayable(withdrawal)) {
    const state =
      withdrawal === undefined
        ? 'missing'
        : `${withdrawal.status} ${resultText(withdrawal.result)} with token account ${withdrawal.createdTokenAccount}`;
    return [`2: ${who} relayed deposit ${vote.index} while its destination entry was ${state} (rule 3.1)`];
  }
  const result = depositResultFromArg(ix.result);
  const truth = withdrawal!.result;
  if (vote.proposal || ix.approve) {
    return result !== undefined && sameResult(result, truth)
      ? []
      : [`4: ${who} voted yes for a result on deposit ${vote.index} that differs from the destination's ${resultText(truth)}`];
  }
  const right = deposit !== undefined && sameResult(deposit.proposed, truth);
  return right ? [`4: ${who} voted no on deposit ${vote.index}, whose proposal equals the destination's ${resultText(truth)}`] : [];
}

/** 6: nothing Finalized moves back, and pending work goes back only by a threshold no or a governance reset. */
function monotone(record: LedgerRecord): string[] {
  const before = headerOf(record.before, record.chain);
  const after = headerOf(record.after, record.chain);
  const problems: string[] = [];
  if (after.generation < before.generation) problems.push(`6: ${record.chain} generation went from ${before.generation} to ${after.generation}`);
  if (after.settledPrefix < before.settledPrefix)
    problems.push(`6: ${record.chain} settled_prefix went from ${before.settledPrefix} to ${after.settledPrefix}`);
  const reset = after.generation > before.generation;
  const lowestNo = lowestNoVote(record);
  const rewound = (index: number) => reset || (lowestNo !== undefined && lowestNo <= index);
  if (record.chain === 'source') {
    if (after.entryCount < before.entryCount) problems.push(`6: deposit entry_count went from ${before.entryCount} to ${after.entryCount}`);
    record.before.source.entries.forEach((was, index) => {
      const now = record.after.source.entries[index];
      if (now !== undefined) problems.push(...depositMoves(index, was, now, rewound(index)));
    });
  } else {
    record.before.target.entries.forEach((was, index) => {
      const now = index < record.after.target.entries.length ? record.after.target.entries[index]! : undefined;
      problems.push(...withdrawalMoves(index, was, now, rewound(index)));
    });
  }
  return problems.map((problem) => `${problem} (transaction ${record.signature}, generation ${before.generation})`);
}

function depositMoves(index: number, was: DepositEntry, now: DepositEntry, rewound: boolean): string[] {
  if (was.status === 'Finalized' && (now.status !== 'Finalized' || !sameResult(now.result, was.result))) {
    return [`6: deposit ${index} went from Finalized ${resultText(was.result)} to ${now.status} ${resultText(now.result)}`];
  }
  if (was.cleanupCompleted && (!now.cleanupCompleted || now.refundedAmount !== was.refundedAmount)) {
    return [`6: deposit ${index} was cleaned up (refund ${was.refundedAmount}), now cleaned ${now.cleanupCompleted} refund ${now.refundedAmount}`];
  }
  if (was.status === 'Relaying' && now.status === 'Initialized' && !rewound) {
    return [`6: deposit ${index} went back from Relaying to Initialized without a threshold no or a governance reset`];
  }
  return [];
}

function withdrawalMoves(index: number, was: WithdrawEntry, now: WithdrawEntry | undefined, rewound: boolean): string[] {
  if (was.status === 'Finalized') {
    const same = now?.status === 'Finalized' && sameResult(now.result, was.result) && sameTransfer(now, was);
    const claim =
      now !== undefined &&
      (now.createdTokenAccount === was.createdTokenAccount || (was.createdTokenAccount === 'Pending' && now.createdTokenAccount === 'Created'));
    if (!same || !claim) {
      return [
        `6: destination entry ${index} went from Finalized ${resultText(was.result)} to ${now?.status ?? 'removed'} ${now === undefined ? '' : resultText(now.result)}`,
      ];
    }
  }
  const removed = now === undefined || now.status === 'Empty';
  if (was.status === 'Voting' && removed && !rewound)
    return [`6: destination entry ${index} was removed without a threshold no or a governance reset`];
  return [];
}

/** 1 at the moment it happens: a deposit finalizes only with its destination's final result. */
function finalizedAtTheMoment(record: LedgerRecord): string[] {
  if (record.chain !== 'source') return [];
  return record.after.source.entries.flatMap((now, index) => {
    if (now.status !== 'Finalized' || record.before.source.entries[index]?.status === 'Finalized') return [];
    const withdrawal = record.before.target.entries[index];
    if (withdrawal?.status === 'Finalized' && sameResult(withdrawal.result, now.result)) return [];
    return [
      `1: deposit ${index} finalized with ${resultText(now.result)} while its destination entry was ${withdrawal?.status ?? 'missing'} ${withdrawal ? resultText(withdrawal.result) : ''} (transaction ${record.signature})`,
    ];
  });
}

function lowestNoVote(record: LedgerRecord): number | undefined {
  const noVotes = record.instructions.flatMap((ix) =>
    (ix.name === 'ack_deposit' || ix.name === 'ack_withdraw') && !ix.approve ? [Number(ix.index)] : [],
  );
  return noVotes.length === 0 ? undefined : Math.min(...noVotes);
}

function headerOf(state: BridgeState, chain: ChainSide): TrackerHeader {
  return chain === 'source' ? state.source.header : state.target.header;
}

function entryOf(state: BridgeState, chain: ChainSide, index: number): DepositEntry | WithdrawEntry | undefined {
  return chain === 'source' ? state.source.entries[index] : state.target.entries[index];
}
