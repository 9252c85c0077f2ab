import {
  decodeDepositEntry,
  decodeTrackerHeader,
  decodeWithdrawEntry,
  encodeDepositEntry,
  encodeTrackerHeader,
  encodeWithdrawEntry,
} from '../../src/chain/codec/accounts.js';
import { entryOffset, entrySize, trackerAccountSize } from '../../src/chain/codec/layout.js';
import { isBridgeError } from '../../src/errors.js';
import { depositTrackerAddress, withdrawTrackerAddress } from '../../src/chain/pda.js';
import type { DepositEntry, TrackerHeader, TrackerKind, WithdrawEntry } from '../../src/chain/types.js';
import { writableAt, type InstructionContext } from './context.js';
import { ProgramError } from './errors.js';

/**
 * A tracker account checked as the program checks it (owner, discriminator, size, PDA of its own
 * stored chain id, writable) with its decoded header. Handlers change `header` in place and
 * call `saveHeader` once; entries are read and written one record at a time.
 */
export interface Tracker {
  kind: TrackerKind;
  address: string;
  header: TrackerHeader;
}

export function loadTracker(ctx: InstructionContext, position: number, kind: TrackerKind): Tracker {
  const { address } = writableAt(ctx, position, kind);
  const account = ctx.store.get(address);
  if (account === undefined || account.data.length === 0) throw new ProgramError('InvalidAccount', `${kind} ${address} does not exist`);
  if (account.owner !== ctx.programId.toBase58()) {
    throw new ProgramError('InvalidAccount', `${kind} ${address} is owned by ${account.owner}, not the bridge program`);
  }
  const header = decodeHeader(account.data, kind, address);
  const ownChainId = kind === 'DepositTracker' ? header.sourceChainId : header.targetChainId;
  if (ownChainId !== ctx.chainId) {
    throw new ProgramError('InvalidAccount', `${kind} ${address} belongs to chain ${ownChainId}, this cluster is chain ${ctx.chainId}`);
  }
  const expected = trackerAddress(ctx, kind, header);
  if (address !== expected) throw new ProgramError('InvalidAccount', `${kind} ${address} is not the tracker PDA ${expected}`);
  if (account.data.length !== trackerAccountSize(kind, Number(header.capacity))) {
    throw new ProgramError('InvalidAccount', `${kind} ${address} has ${account.data.length} bytes, not the size of capacity ${header.capacity}`);
  }
  return { kind, address, header };
}

function decodeHeader(data: Uint8Array, kind: TrackerKind, address: string): TrackerHeader {
  try {
    return decodeTrackerHeader(data, kind, address);
  } catch (err) {
    if (isBridgeError(err)) throw new ProgramError('InvalidAccount', err.message);
    throw err;
  }
}

/** The PDA a tracker must live at, from its own stored chain id. */
export function trackerAddress(ctx: InstructionContext, kind: TrackerKind, header: Pick<TrackerHeader, 'sourceChainId' | 'targetChainId'>): string {
  const address =
    kind === 'DepositTracker'
      ? depositTrackerAddress(ctx.programId, header.targetChainId)
      : withdrawTrackerAddress(ctx.programId, header.sourceChainId);
  return address.toBase58();
}

export function saveHeader(ctx: InstructionContext, tracker: Tracker): void {
  ctx.store.writeData(tracker.address, 0, encodeTrackerHeader(tracker.header));
}

function record(ctx: InstructionContext, tracker: Tracker, index: bigint): Uint8Array {
  const data = ctx.store.get(tracker.address)!.data;
  const offset = entryOffset(tracker.kind, Number(index));
  return data.subarray(offset, offset + entrySize(tracker.kind));
}

export function readDepositEntry(ctx: InstructionContext, tracker: Tracker, index: bigint): DepositEntry {
  return decodeDepositEntry(record(ctx, tracker, index), tracker.address, Number(index));
}

export function writeDepositEntry(ctx: InstructionContext, tracker: Tracker, index: bigint, entry: DepositEntry): void {
  ctx.store.writeData(tracker.address, entryOffset(tracker.kind, Number(index)), encodeDepositEntry(entry));
}

export function readWithdrawEntry(ctx: InstructionContext, tracker: Tracker, index: bigint): WithdrawEntry {
  return decodeWithdrawEntry(record(ctx, tracker, index), tracker.address, Number(index));
}

export function writeWithdrawEntry(ctx: InstructionContext, tracker: Tracker, index: bigint, entry: WithdrawEntry): void {
  ctx.store.writeData(tracker.address, entryOffset(tracker.kind, Number(index)), encodeWithdrawEntry(entry));
}

/** Zeroes entries `from .. to - 1` in one write (a removed WithdrawEntry is all zeros). */
export function zeroEntries(ctx: InstructionContext, tracker: Tracker, from: bigint, to: bigint): void {
  if (to <= from) return;
  const size = entrySize(tracker.kind) * Number(to - from);
  ctx.store.writeData(tracker.address, entryOffset(tracker.kind, Number(from)), new Uint8Array(size));
}
