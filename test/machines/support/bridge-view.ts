import { Keypair } from '@solana/web3.js';
import type { BridgeView } from '../../../src/chain/port/bridge-chains.js';
import type { TransferRange } from '../../../src/chain/client/read/read-transfers.js';
import type { DepositEntry, DepositResult, TrackerHeader, TrackerKind, WithdrawEntry } from '../../../src/chain/types.js';
import type { WaitingRead } from '../../../src/machines/planning/waiting.js';
import { depositEntry } from '../../support/deposit-entry.js';

/**
 * Hand-built BridgeViews for planner and machine tests. Windows start where the chain client
 * starts them (src/chain/client/read/window.ts) unless a test says otherwise.
 */

export const AUTHORITY = 'Authority1111111111111111111111111111111111';
export const OTHER_AUTHORITIES = ['Bthority2222222222222222222222222222222222', 'Cthority3333333333333333333333333333333333'];
const GOVERNANCE = 'Governance111111111111111111111111111111111';

/** A read in which nothing waits: no deposits, no planned votes, nothing oldest. */
export const NOT_WAITING: WaitingRead = {
  slots: { source: 100, target: 100 },
  oldest: { ack_deposit: null, ack_withdraw: null, cleanup_deposit: null },
  votes: { ack_deposit: [], ack_withdraw: [] },
  settledPrefix: 0,
  deposits: [],
};

export interface HeaderOptions {
  entryCount: number;
  settledPrefix?: number;
  /** This authority's next_index. */
  ownNext: number;
  /** Authorities in slot order; this authority is in slot 0 unless listed otherwise. */
  authorities?: string[];
}

export function trackerHeader(kind: TrackerKind, options: HeaderOptions): TrackerHeader {
  const authorities = options.authorities ?? [AUTHORITY, ...OTHER_AUTHORITIES];
  return {
    kind,
    sourceChainId: 1,
    targetChainId: 2,
    threshold: 2,
    authorityCount: authorities.length,
    entryCount: BigInt(options.entryCount),
    capacity: 1024n,
    settledPrefix: BigInt(options.settledPrefix ?? 0),
    generation: 0n,
    governance: GOVERNANCE,
    authorities,
    votes: authorities.map((authority) => ({
      nextIndex: BigInt(authority === AUTHORITY ? options.ownNext : 0),
      lastVote: 'None' as const,
    })),
  };
}

/** The deposit of transfer `n` (the tests' one DepositEntry fixture). */
export { depositEntry as deposit };

/** The destination entry proposing exactly `source`'s transfer. */
export function withdrawal(source: DepositEntry, overrides: Partial<WithdrawEntry> = {}): WithdrawEntry {
  return {
    status: 'Voting',
    createdTokenAccount: 'Pending',
    yesVotes: 0,
    noVotes: 0,
    amount: source.amount,
    recipient: source.recipient,
    sourceMint: source.sourceMint,
    result: { kind: 'None' },
    tokenAccount: '11111111111111111111111111111111',
    finalizedSlot: 0n,
    ...overrides,
  };
}

export const CONFIRMED_FULL = (entry: DepositEntry): DepositResult => ({ kind: 'Confirmed', amount: entry.amount });

/** A finalized destination entry for `source`, relayable under rule 3.1 unless overridden. */
export function finalizedWithdrawal(source: DepositEntry, result: DepositResult, overrides: Partial<WithdrawEntry> = {}): WithdrawEntry {
  return withdrawal(source, {
    status: 'Finalized',
    result,
    createdTokenAccount: result.kind === 'Rejected' ? 'NotRequired' : 'Created',
    finalizedSlot: 500n,
    ...overrides,
  });
}

export interface ViewOptions {
  deposits: DepositEntry[];
  withdrawals: WithdrawEntry[];
  ownSourceNext?: number;
  ownTargetNext?: number;
  sourceSettled?: number;
  targetSettled?: number;
  /** The slots the view was read at (default 1000 on both chains). */
  slots?: { source: number; target: number };
  /** Override the window starts (default: as the chain client computes them). */
  depositWindowStart?: number;
  withdrawWindowStart?: number;
}

/** A view whose windows hold `deposits` / `withdrawals` from their start index on. */
export function bridgeView(options: ViewOptions): BridgeView {
  const ownSourceNext = options.ownSourceNext ?? 0;
  const ownTargetNext = options.ownTargetNext ?? 0;
  const sourceSettled = options.sourceSettled ?? 0;
  const sourceCount = options.deposits.length;
  const targetCount = options.withdrawals.length;
  const depositStart = options.depositWindowStart ?? Math.min(sourceSettled, ownSourceNext, ownTargetNext, sourceCount);
  const withdrawStart = options.withdrawWindowStart ?? Math.min(ownTargetNext, ownSourceNext, targetCount);
  return {
    authority: AUTHORITY,
    deposits: {
      header: trackerHeader('DepositTracker', { entryCount: sourceCount, settledPrefix: sourceSettled, ownNext: ownSourceNext }),
      entries: entriesFrom(options.deposits, depositStart),
    },
    withdrawals: {
      header: trackerHeader('WithdrawTracker', {
        entryCount: targetCount,
        settledPrefix: options.targetSettled ?? 0,
        ownNext: ownTargetNext,
      }),
      entries: entriesFrom(options.withdrawals, withdrawStart),
    },
    slots: options.slots ?? { source: 1000, target: 1000 },
  };
}

/** `entries` from index `start` on, by index, as readState returns them. */
function entriesFrom<E>(entries: readonly E[], start: number): Map<number, E> {
  return new Map(entries.slice(start).map((entry, i) => [start + i, entry]));
}

export function deposits(count: number, overrides: Partial<DepositEntry> = {}): DepositEntry[] {
  return Array.from({ length: count }, (_, n) => depositEntry(n, overrides));
}

const SIXTEEN_AUTHORITIES = Array.from({ length: 16 }, (_, i) => Keypair.fromSeed(new Uint8Array(32).fill(i + 1)).publicKey.toBase58());
const EVERYONE = 0xffff;

/** `count` transfers from `start` on which all 16 authorities voted yes on both chains: 500 of them make the largest page there is. */
export function everyoneVotedRange(count: number, start = 0): TransferRange {
  const sources = deposits(count, { yesVotes: EVERYONE });
  return {
    sourceHeader: trackerHeader('DepositTracker', { entryCount: 10_000, ownNext: 0, authorities: SIXTEEN_AUTHORITIES }),
    targetHeader: trackerHeader('WithdrawTracker', { entryCount: 10_000, ownNext: 0, authorities: SIXTEEN_AUTHORITIES }),
    start,
    deposits: sources,
    withdrawals: sources.map((source) => withdrawal(source, { yesVotes: EVERYONE })),
    slots: { source: 5_000, target: 5_000 },
  };
}
