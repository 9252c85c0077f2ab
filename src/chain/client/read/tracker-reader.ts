import type { Commitment, PublicKey } from '@solana/web3.js';
import { BridgeError } from '../../../errors.js';
import type { Metrics } from '../../../metrics/metrics.js';
import { type ChainSide, chainVariables } from '../../../domain.js';
import { assertOwnedBy, decodeTrackerHeader } from '../../codec/accounts.js';
import { malformedAccount } from '../../codec/account-errors.js';
import { TRACKER_HEADER_SIZE, entryOffset, entrySize, trackerAccountSize } from '../../codec/layout.js';
import type { ChainRpc } from '../../rpc/chain-rpc.js';
import type { AccountData } from '../../rpc/rpc-answers.js';
import { MAX_ACCOUNT_SLICE_BYTES } from '../../rpc/bounded-body.js';
import type { TrackerHeader, TrackerKind } from '../../types.js';
import { mapBounded } from './concurrency.js';
import { sliceRanges, type EntryRange } from './window.js';

/**
 * Reads of one tracker account with a dataSlice: its 848-byte header (alone, or with other
 * accounts in one getMultipleAccounts), or runs of entries in bounded slices. Every response is
 * checked (account exists, owner is the configured program, the slice is as long as asked) and
 * its bytes are counted. A header read also checks the account's length against its capacity
 * (PROTOCOL.md: exactly 848 + capacity × entry size) from the `space` the node reports with the
 * slice, at no extra request; a node that does not report it leaves that to the slice-length
 * check of each entry read.
 */

/** At most this many bytes of account data per request (the response limit of ../../rpc/bounded-body.ts follows from it). */
export const MAX_SLICE_BYTES = MAX_ACCOUNT_SLICE_BYTES;
/** Slice requests in flight per tracker read. */
export const SLICE_CONCURRENCY = 4;

export interface TrackerRef {
  chain: ChainSide;
  kind: TrackerKind;
  address: PublicKey;
  /** `address` in base58, for messages. */
  account: string;
  programId: PublicKey;
  /** The chain ids the tracker must store (the configured ones). */
  sourceChainId: number;
  targetChainId: number;
}

/** Counts account bytes per chain: the running counter at once, a per-read total on demand. */
export class ReadMeter {
  readonly bytes: Record<ChainSide, number> = { source: 0, target: 0 };

  constructor(private readonly metrics: Metrics) {}

  add(chain: ChainSide, bytes: number): void {
    this.bytes[chain] += bytes;
    this.metrics.accountBytesRead.inc({ chain }, bytes);
  }
}

export interface HeaderRead {
  header: TrackerHeader;
  /** The slot the node answered at; later slices of the same view ask for at least this slot. */
  slot: number;
}

const HEADER_SLICE = { offset: 0, length: TRACKER_HEADER_SIZE };

export async function readTrackerHeader(
  rpc: ChainRpc,
  tracker: TrackerRef,
  commitment: Commitment,
  meter: ReadMeter,
  signal: AbortSignal,
): Promise<HeaderRead> {
  const { slot, account } = await rpc.getAccountInfo(tracker.address, { commitment, dataSlice: HEADER_SLICE }, signal);
  return { header: checkedHeader(tracker, account, commitment, meter), slot };
}

/** Accounts read in the same answer as a tracker's header, and who is told what the answer held. */
export interface HeaderCompanions {
  addresses: readonly PublicKey[];
  /** The answer's accounts for `addresses` (in order, each cut to the header's slice) and its slot; told before the header is checked. */
  observe(accounts: readonly AccountData[], slot: number): void;
}

/**
 * The tracker's header and `companions` in one getMultipleAccounts: one answer, one slot, so
 * both are one view of the chain. The header's slice (848 bytes from 0) applies to every
 * address; a node returns a shorter account whole (Agave's `slice_data`), so an account of at
 * most 848 bytes (a nonce account's 80) reads as it would alone.
 */
export async function readTrackerHeaderWith(
  rpc: ChainRpc,
  tracker: TrackerRef,
  commitment: Commitment,
  companions: HeaderCompanions,
  meter: ReadMeter,
  signal: AbortSignal,
): Promise<HeaderRead> {
  const { slot, accounts } = await rpc.getMultipleAccounts(
    [tracker.address, ...companions.addresses],
    { commitment, dataSlice: HEADER_SLICE },
    signal,
  );
  const [account, ...others] = accounts;
  companions.observe(others, slot);
  return { header: checkedHeader(tracker, account ?? null, commitment, meter), slot };
}

function checkedHeader(tracker: TrackerRef, account: AccountData, commitment: Commitment, meter: ReadMeter): TrackerHeader {
  const data = checkedSlice(tracker, HEADER_SLICE, account, commitment, meter);
  const header = decodeTrackerHeader(data, tracker.kind, tracker.account);
  checkAccountLength(header, account?.space, tracker);
  checkChainIds(header, tracker);
  return header;
}

/** The raw bytes of entries `range.start .. range.end-1`, read in slices of at most MAX_SLICE_BYTES. */
export async function readEntryBytes(
  rpc: ChainRpc,
  tracker: TrackerRef,
  range: EntryRange,
  options: { commitment: Commitment; minContextSlot?: number },
  meter: ReadMeter,
  signal: AbortSignal,
): Promise<Uint8Array> {
  const size = entrySize(tracker.kind);
  const slices = sliceRanges(range, size, MAX_SLICE_BYTES);
  const parts = await mapBounded(slices, SLICE_CONCURRENCY, signal, async (slice, sliceSignal) => {
    const dataSlice = { offset: entryOffset(tracker.kind, slice.start), length: (slice.end - slice.start) * size };
    return readAccountSlice(rpc, tracker, dataSlice, options, meter, sliceSignal);
  });
  return concat(parts);
}

/** The entries of `ranges`, decoded, by index (in ascending order when the ranges are). */
export async function readEntries<E>(
  rpc: ChainRpc,
  tracker: TrackerRef,
  ranges: readonly EntryRange[],
  decode: (bytes: Uint8Array, account: string, startIndex: number) => E[],
  options: { commitment: Commitment; minContextSlot?: number },
  meter: ReadMeter,
  signal: AbortSignal,
): Promise<Map<number, E>> {
  const runs = await mapBounded(ranges, SLICE_CONCURRENCY, signal, async (range, rangeSignal) => {
    const bytes = await readEntryBytes(rpc, tracker, range, options, meter, rangeSignal);
    return decode(bytes, tracker.account, range.start).map((entry, i) => [range.start + i, entry] as const);
  });
  return new Map(runs.flat());
}

async function readAccountSlice(
  rpc: ChainRpc,
  tracker: TrackerRef,
  dataSlice: { offset: number; length: number },
  options: { commitment: Commitment; minContextSlot?: number },
  meter: ReadMeter,
  signal: AbortSignal,
): Promise<Uint8Array> {
  const { account } = await rpc.getAccountInfo(tracker.address, { ...options, dataSlice }, signal);
  return checkedSlice(tracker, dataSlice, account, options.commitment, meter);
}

/** The slice's bytes once the account exists, is the program's and is as long as asked; counted. */
function checkedSlice(
  tracker: TrackerRef,
  dataSlice: { offset: number; length: number },
  account: AccountData,
  commitment: Commitment,
  meter: ReadMeter,
): Uint8Array {
  if (account === null) throw trackerNotFound(tracker, commitment);
  meter.add(tracker.chain, account.data.length);
  assertOwnedBy(tracker.account, account.owner, tracker.programId, chainVariables(tracker.chain).programId);
  if (account.data.length !== dataSlice.length) {
    const field = dataSlice.offset === 0 ? 'header' : `bytes ${dataSlice.offset}..${dataSlice.offset + dataSlice.length}`;
    throw malformedAccount(
      tracker.account,
      field,
      `has ${account.data.length} bytes, expected ${dataSlice.length}: the account is shorter than its header and entry_count entries`,
    );
  }
  return account.data;
}

// decodeTrackerHeader has bounded capacity, so the expected length is an exact small number.
function checkAccountLength(header: TrackerHeader, space: number | undefined, tracker: TrackerRef): void {
  if (space === undefined) return;
  const expected = trackerAccountSize(tracker.kind, Number(header.capacity));
  if (space === expected) return;
  throw malformedAccount(
    tracker.account,
    'capacity',
    `is ${header.capacity}, so the account must hold ${expected} bytes (848 + capacity × ${entrySize(tracker.kind)}), ` +
      `but the node reports ${space}`,
  );
}

function checkChainIds(header: TrackerHeader, tracker: TrackerRef): void {
  const checks = [
    { variable: 'BRIDGE_SOURCE_CHAIN_ID', field: 'source_chain_id', expected: tracker.sourceChainId, actual: header.sourceChainId },
    { variable: 'BRIDGE_TARGET_CHAIN_ID', field: 'target_chain_id', expected: tracker.targetChainId, actual: header.targetChainId },
  ] as const;
  for (const { variable, field, expected, actual } of checks) {
    if (expected === actual) continue;
    throw new BridgeError('CHAIN__INVALID_CHAIN_ID', { account: tracker.account, variable, expected, actual }, { tracker: tracker.kind, field });
  }
}

// Not retryable: a tracker missing at its PDA is a deployment or configuration problem
// (chain ids, program id, RPC URL of the wrong cluster). A node that lags behind a fresh
// deployment heals by itself: every cycle reads again.
function trackerNotFound(tracker: TrackerRef, commitment: Commitment): BridgeError<'CHAIN__ACCOUNT_NOT_FOUND'> {
  const { rpcUrl, programId } = chainVariables(tracker.chain);
  return new BridgeError(
    'CHAIN__ACCOUNT_NOT_FOUND',
    { account: tracker.account, chain: tracker.chain },
    { tracker: tracker.kind, commitment, rpcUrlVariable: rpcUrl, programIdVariable: programId },
  );
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
