import { describe, expect, it } from 'vitest';
import type { TrackerHeader, WithdrawEntry } from '../../src/chain/types.js';
import { depositEntry, key } from '../../test/support/deposit-entry.js';
import type { LedgerRecord } from '../system/ledger.js';
import type { BridgeState } from '../system/snapshot.js';
import { TransactionAudit } from './transaction-audit.js';

/**
 * Invariants 4, 9 and 10 (transaction-audit.ts) fed hand-made ledgers: each must report the history
 * it exists for, with a message that names the authority, the vote and both transactions, and
 * stay quiet on the histories that look alike but are legitimate. Without this, a check that
 * never fires in the property runs could be one that cannot.
 */

const honest = key(1);
const others = [key(2), key(3)];
const deposit = depositEntry(0, { status: 'Relaying' });
const vote = {
  name: 'ack_deposit',
  index: 0n,
  approve: true,
  amount: deposit.amount,
  recipient: deposit.recipient,
  sourceMint: deposit.sourceMint,
} as const;

function header(kind: TrackerHeader['kind'], entryCount: number, honestNext: number): TrackerHeader {
  return {
    kind,
    sourceChainId: 1,
    targetChainId: 2,
    threshold: 2,
    authorityCount: 3,
    entryCount: BigInt(entryCount),
    capacity: 16n,
    settledPrefix: 0n,
    generation: 0n,
    governance: key(9),
    authorities: [honest, ...others],
    votes: [
      { nextIndex: BigInt(honestNext), lastVote: 'Yes' },
      { nextIndex: 0n, lastVote: 'None' },
      { nextIndex: 0n, lastVote: 'None' },
    ],
  };
}

const proposed: WithdrawEntry = {
  status: 'Voting',
  createdTokenAccount: 'Pending',
  yesVotes: 1,
  noVotes: 0,
  amount: deposit.amount,
  recipient: deposit.recipient,
  sourceMint: deposit.sourceMint,
  result: { kind: 'None' },
  tokenAccount: key(0),
  finalizedSlot: 0n,
};

/** The destination before the honest authority's proposal of entry 0, and after it. */
const beforeVote: BridgeState = {
  source: { header: header('DepositTracker', 1, 0), entries: [deposit] },
  target: { header: header('WithdrawTracker', 0, 0), entries: [] },
};
const afterVote: BridgeState = {
  source: beforeVote.source,
  target: { header: header('WithdrawTracker', 1, 1), entries: [proposed] },
};

type Landing = Omit<LedgerRecord, 'seq' | 'slot'>;

function landed(signature: string, err: unknown, before: BridgeState, after: BridgeState): Landing {
  return { chain: 'target', signature, err, feePayer: honest, fee: 5_000n, unitPrice: 0n, instructions: [vote], before, after, sent: before };
}

const VOTE_OUT_OF_ORDER = { InstructionError: [3, { Custom: 6001 }] };

/** The problems the audit reports for `landings`, in landing order (ledger #0, #1, ...). */
function audit(landings: readonly Landing[]): string[] {
  const checker = new TransactionAudit(new Map([[honest, 100_000]]), new Map([[honest, 'authority 0']]));
  return landings.flatMap((landing, seq) => checker.audit({ ...landing, seq, slot: 100 + seq }));
}

describe('invariants 9 and 10: each vote lands once', () => {
  it('one vote carried by two landed transactions that both executed: 10 names the vote and both transactions', () => {
    const problems = audit([landed('first', null, beforeVote, afterVote), landed('second', null, afterVote, afterVote)]);
    const carried = problems.filter((problem) => problem.startsWith('10:'));
    expect(carried).toEqual([
      "10: authority 0's ack_deposit 0 on the target chain is carried by transaction second (ledger #1) and by ledger #0, which counted it: a vote carried by two landed transactions",
    ]);
  });

  it('a second version landed with VoteOutOfOrder (its fee paid for nothing): 9 says a vote was sent twice, 10 that two transactions carry it', () => {
    const problems = audit([landed('first', null, beforeVote, afterVote), landed('late', VOTE_OUT_OF_ORDER, afterVote, afterVote)]);
    expect(problems).toEqual([
      "10: authority 0's ack_deposit 0 on the target chain is carried by transaction late (ledger #1) and by ledger #0, which counted it: a vote carried by two landed transactions",
      "9: authority 0's transaction late landed with an error carrying ack_deposit 0, already counted (next_index 1): a vote sent twice",
    ]);
  });

  it('quiet on the look-alikes: a failed carrier first (it counted nothing) and the vote landing once after it', () => {
    const problems = audit([landed('failed', VOTE_OUT_OF_ORDER, beforeVote, beforeVote), landed('landed', null, beforeVote, afterVote)]);
    expect(problems).toEqual([]);
  });

  it('quiet on one carrier alone', () => {
    expect(audit([landed('only', null, beforeVote, afterVote)])).toEqual([]);
  });
});

describe('invariant 4 across a governance reset: a no sent before it lands after it', () => {
  const lie: WithdrawEntry = { ...proposed, amount: deposit.amount + 1n, yesVotes: 2 };
  const noVote = { ...vote, approve: false } as const;
  /** The destination when the honest authority sent its no: entry 0 is another authority's wrong proposal. */
  const onTheLie: BridgeState = { source: beforeVote.source, target: { header: header('WithdrawTracker', 1, 0), entries: [lie] } };
  /** After set_token_pair (generation 1) and a new, honest proposal of entry 0, at the honest authority's rewound position. */
  const onTheTruth = (generation: bigint): BridgeState => ({
    source: beforeVote.source,
    target: { header: { ...header('WithdrawTracker', 1, 0), generation }, entries: [{ ...proposed, yesVotes: 2 }] },
  });
  const staleNo = (sent: BridgeState, generation: bigint): LedgerRecord => ({
    ...landed('stale', null, onTheTruth(generation), onTheTruth(generation)),
    instructions: [noVote],
    sent,
    seq: 0,
    slot: 100,
  });
  const checker = () => new TransactionAudit(new Map([[honest, 100_000]]), new Map([[honest, 'authority 0']]));

  it('judged on the view it was cast on: quiet, and counted as staleAcrossReset with its entry', () => {
    const audit = checker();
    expect(audit.audit(staleNo(onTheLie, 1n))).toEqual([]);
    expect(audit.coverage.staleAcrossReset).toBe(1);
    expect(audit.staleNos).toEqual([{ chain: 'target', index: 0, signature: 'stale' }]);
  });

  it('without a reset between its send and its landing, the same no is a dishonest vote', () => {
    const audit = checker();
    expect(audit.audit(staleNo(onTheLie, 0n))).toEqual([
      '4: authority 0 voted no on destination entry 0, whose transfer equals the deposit (transaction stale, authority 0)',
    ]);
    expect(audit.staleNos).toEqual([]);
  });

  it('a no that was wrong on the view it was cast on is a dishonest vote, reset or not', () => {
    expect(checker().audit(staleNo(onTheTruth(0n), 1n))).toEqual([
      '4: authority 0 voted no on destination entry 0, whose transfer equals the deposit (transaction stale, authority 0)',
    ]);
  });
});
