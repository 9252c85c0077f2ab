import type { Commitment, PublicKey } from '@solana/web3.js';
import type { BridgeView, ReadLimits, TrackerWindow } from '../../port/bridge-chains.js';
import type { Metrics } from '../../../metrics/metrics.js';
import { decodeDepositEntries, decodeWithdrawEntries } from '../../codec/accounts.js';
import type { ChainRpc } from '../../rpc/chain-rpc.js';
import type { DepositEntry, TrackerHeader, WithdrawEntry } from '../../types.js';
import type { ChainSide } from '../../../domain.js';
import {
  ReadMeter,
  readEntries,
  readTrackerHeader,
  readTrackerHeaderWith,
  type HeaderCompanions,
  type HeaderRead,
  type TrackerRef,
} from './tracker-reader.js';
import { positionRanges } from './window.js';
import { authoritySlot, ownNextIndex, toEntryIndex } from '../../port/authority-position.js';

/**
 * One consistent view of both trackers for the vote planner (docs/chain-client.md, "readState:
 * what it reads"). The header reads, then the two entry windows; every step fetches both chains
 * concurrently. Each chain's confirmed header comes in one getMultipleAccounts with that chain's
 * `companions` (the nonce pool): one answer, one slot, so the landing mode and who signs are
 * read from the same view as the positions, at no call of their own. The authority's balances
 * are ../read-authority.ts's. A window is `limits.entriesPerPosition` entries from each position a
 * planner starts at: settled_prefix (cleanup) and this authority's two next_index (ack_withdraw
 * from its source position, ack_deposit from its destination position), on the source; the two
 * next_index on the destination. At most three runs of that length per tracker, whatever the header's counters say.
 *
 * Commitments: the source entries and the source header's counters (entry_count,
 * settled_prefix) come from one read at `sourceReadCommitment` (finalized by default), since
 * ack_deposit votes copy deposit data onto the destination. Own vote positions and the whole
 * destination tracker are read at confirmed, so that a vote that landed in the previous
 * cycle is seen in this one.
 */

export interface ChainEndpoint {
  rpc: ChainRpc;
  tracker: TrackerRef;
}

export interface ReadStateContext {
  source: ChainEndpoint;
  target: ChainEndpoint;
  authority: PublicKey;
  sourceReadCommitment: Commitment;
  /** Read with each chain's confirmed header (./tracker-reader.ts, `readTrackerHeaderWith`). */
  companions: Record<ChainSide, HeaderCompanions>;
  metrics: Metrics;
}

const POSITION_COMMITMENT: Commitment = 'confirmed';

/**
 * Sequential rounds of read calls in readBridgeView: the headers, then the entry windows (at
 * most three runs per tracker, each within one slice, so one round of SLICE_CONCURRENCY).
 */
export const STATE_READ_ROUNDS = 2;

export async function readBridgeView(ctx: ReadStateContext, limits: ReadLimits, signal: AbortSignal): Promise<BridgeView> {
  const { source, target, authority, sourceReadCommitment, companions, metrics } = ctx;
  const meter = new ReadMeter(metrics);
  const authorityKey = authority.toBase58();

  const sourcePositions = readTrackerHeaderWith(source.rpc, source.tracker, POSITION_COMMITMENT, companions.source, meter, signal);
  const sourceData =
    sourceReadCommitment === POSITION_COMMITMENT
      ? sourcePositions
      : readTrackerHeader(source.rpc, source.tracker, sourceReadCommitment, meter, signal);
  const [dataRead, positionRead, targetRead] = await Promise.all([
    sourceData,
    sourcePositions,
    readTrackerHeaderWith(target.rpc, target.tracker, POSITION_COMMITMENT, companions.target, meter, signal),
  ]);

  const ownSourceNext = ownNextIndex(positionRead.header, authorityKey, source.tracker);
  const ownTargetNext = ownNextIndex(targetRead.header, authorityKey, target.tracker);
  authoritySlot(dataRead.header, authorityKey, source.tracker);

  const own = { ownSourceNext, ownTargetNext, perPosition: limits.entriesPerPosition };
  const [deposits, withdrawals] = await Promise.all([
    readDepositWindow(ctx, dataRead, positionRead.header, own, meter, signal),
    readWithdrawWindow(ctx, targetRead, own, meter, signal),
  ]);

  for (const chain of ['source', 'target'] as const) metrics.lastCycleAccountBytes.set({ chain }, meter.bytes[chain]);
  const slots = { source: Math.max(dataRead.slot, positionRead.slot), target: targetRead.slot };
  return { authority: authorityKey, deposits, withdrawals, slots };
}

interface OwnPositions {
  ownSourceNext: number;
  ownTargetNext: number;
  /** Entries to read from each position. */
  perPosition: number;
}

async function readDepositWindow(
  ctx: ReadStateContext,
  dataRead: HeaderRead,
  positionHeader: TrackerHeader,
  own: OwnPositions,
  meter: ReadMeter,
  signal: AbortSignal,
): Promise<TrackerWindow<DepositEntry>> {
  const { rpc, tracker } = ctx.source;
  const entryCount = toEntryIndex(dataRead.header.entryCount, tracker.account, 'entry_count');
  const settledPrefix = toEntryIndex(dataRead.header.settledPrefix, tracker.account, 'settled_prefix');
  const ranges = positionRanges([settledPrefix, own.ownSourceNext, own.ownTargetNext], entryCount, own.perPosition);
  const options = { commitment: ctx.sourceReadCommitment, minContextSlot: dataRead.slot };
  const entries = await readEntries(rpc, tracker, ranges, decodeDepositEntries, options, meter, signal);
  // Counters and entries from the deposit-data read; positions from the confirmed read.
  const header: TrackerHeader = { ...dataRead.header, votes: positionHeader.votes };
  return { header, entries };
}

async function readWithdrawWindow(
  ctx: ReadStateContext,
  targetRead: HeaderRead,
  own: OwnPositions,
  meter: ReadMeter,
  signal: AbortSignal,
): Promise<TrackerWindow<WithdrawEntry>> {
  const { rpc, tracker } = ctx.target;
  const entryCount = toEntryIndex(targetRead.header.entryCount, tracker.account, 'entry_count');
  const ranges = positionRanges([own.ownTargetNext, own.ownSourceNext], entryCount, own.perPosition);
  const options = { commitment: POSITION_COMMITMENT, minContextSlot: targetRead.slot };
  const entries = await readEntries(rpc, tracker, ranges, decodeWithdrawEntries, options, meter, signal);
  return truncateAtRemoved({ header: targetRead.header, entries });
}

/**
 * The header and the entries are separate requests. When a threshold no or a governance reset
 * removes entries between them, the entries read Empty below the header's entry_count. The
 * program leaves exactly `entry_count = i` with entries from `i` on Empty after such a removal,
 * so the window is cut at the first Empty entry and entry_count lowered to it.
 */
export function truncateAtRemoved(window: TrackerWindow<WithdrawEntry>): TrackerWindow<WithdrawEntry> {
  const removed = [...window.entries].find(([, entry]) => entry.status === 'Empty')?.[0];
  if (removed === undefined) return window;
  return {
    header: { ...window.header, entryCount: BigInt(removed) },
    entries: new Map([...window.entries].filter(([index]) => index < removed)),
  };
}
