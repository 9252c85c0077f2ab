import type { AuthorityVote, TrackerHeader, TrackerKind } from '../types.js';
import { accountReader, checkDiscriminator, checkLength, decodeTag, malformedAccount } from './account-errors.js';
import { ByteWriter, KEY_SIZE, type ByteReader } from './bytes.js';
import {
  ACCOUNT_DISCRIMINATORS,
  AUTHORITY_VOTE_SIZE,
  DISCRIMINATOR_SIZE,
  LAST_VOTES,
  MAX_AUTHORITIES,
  TRACKER_HEADER_SIZE,
  maxTrackerCapacity,
  tagOf,
} from './layout.js';

/**
 * The 848-byte tracker header (PROTOCOL.md "Tracker header"). Only the first authority_count
 * authority and vote slots are meaningful: decoding ignores unused slots and reserved bytes,
 * as the program does (it never reads them), so they cannot fail a read; encoding writes
 * zeros there.
 */

/** `data` may be the header alone (a dataSlice read) or the whole account. */
export function decodeTrackerHeader(data: Uint8Array, kind: TrackerKind, account: string): TrackerHeader {
  checkDiscriminator(data, kind, account);
  checkLength(data, TRACKER_HEADER_SIZE, { account, field: 'header' });
  const reader = accountReader(data.subarray(0, TRACKER_HEADER_SIZE), account, 'header');
  reader.skip(DISCRIMINATOR_SIZE);
  const sourceChainId = reader.u16();
  const targetChainId = reader.u16();
  const threshold = reader.u8();
  const authorityCount = reader.u8();
  checkAuthorities(authorityCount, threshold, account);
  reader.skip(2);
  const entryCount = reader.u64();
  const capacity = reader.u64();
  const settledPrefix = reader.u64();
  checkCounters(kind, { entryCount, capacity, settledPrefix }, account);
  const generation = reader.u64();
  const governance = reader.base58();
  const authorities = readAuthorities(reader, authorityCount);
  const votes = readVotes(reader, authorityCount, account);
  return {
    kind,
    sourceChainId,
    targetChainId,
    threshold,
    authorityCount,
    entryCount,
    capacity,
    settledPrefix,
    generation,
    governance,
    authorities,
    votes,
  };
}

function checkAuthorities(authorityCount: number, threshold: number, account: string): void {
  if (authorityCount < 1 || authorityCount > MAX_AUTHORITIES) {
    throw malformedAccount(account, 'authority_count', `is ${authorityCount}, expected 1 ..= ${MAX_AUTHORITIES}`);
  }
  if (threshold < 1 || threshold > authorityCount) {
    throw malformedAccount(account, 'threshold', `is ${threshold}, expected 1 ..= authority_count (${authorityCount})`);
  }
}

// The program keeps settled_prefix <= entry_count <= capacity, and no account holds more than
// 10 MiB. A reader computes its entry window from these, so a violation must stop the read
// rather than produce a wrong window; and as every later check compares against capacity,
// bounding it here bounds every number the header can make the server use.
function checkCounters(kind: TrackerKind, counters: { entryCount: bigint; capacity: bigint; settledPrefix: bigint }, account: string): void {
  const { entryCount, capacity, settledPrefix } = counters;
  const maxCapacity = maxTrackerCapacity(kind);
  if (capacity > BigInt(maxCapacity)) {
    throw malformedAccount(account, 'capacity', `is ${capacity}, above the ${maxCapacity} entries a 10 MiB ${kind} can hold`);
  }
  if (entryCount > capacity) {
    throw malformedAccount(account, 'entry_count', `is ${entryCount}, above capacity ${capacity}`);
  }
  if (settledPrefix > entryCount) {
    throw malformedAccount(account, 'settled_prefix', `is ${settledPrefix}, above entry_count ${entryCount}`);
  }
}

function readAuthorities(reader: ByteReader, count: number): string[] {
  const authorities = Array.from({ length: count }, () => reader.base58());
  reader.skip((MAX_AUTHORITIES - count) * KEY_SIZE);
  return authorities;
}

function readVotes(reader: ByteReader, count: number, account: string): AuthorityVote[] {
  const votes = Array.from({ length: count }, (_, slot) => {
    const nextIndex = reader.u64();
    const lastVote = decodeTag(LAST_VOTES, reader.u8(), account, `votes[${slot}].last_vote`);
    reader.skip(7);
    return { nextIndex, lastVote };
  });
  reader.skip((MAX_AUTHORITIES - count) * AUTHORITY_VOTE_SIZE);
  return votes;
}

export function encodeTrackerHeader(header: TrackerHeader): Uint8Array {
  const { authorityCount, authorities, votes } = header;
  if (authorities.length !== authorityCount || votes.length !== authorityCount || authorityCount > MAX_AUTHORITIES) {
    throw new RangeError(
      `tracker header: authorities (${authorities.length}) and votes (${votes.length}) must both hold authorityCount (${authorityCount}) items, at most ${MAX_AUTHORITIES}`,
    );
  }
  const writer = new ByteWriter(TRACKER_HEADER_SIZE)
    .raw(ACCOUNT_DISCRIMINATORS[header.kind])
    .u16(header.sourceChainId, 'sourceChainId')
    .u16(header.targetChainId, 'targetChainId')
    .u8(header.threshold, 'threshold')
    .u8(authorityCount, 'authorityCount')
    .zeros(2)
    .u64(header.entryCount, 'entryCount')
    .u64(header.capacity, 'capacity')
    .u64(header.settledPrefix, 'settledPrefix')
    .u64(header.generation, 'generation')
    .base58(header.governance, 'governance');
  for (const [slot, authority] of authorities.entries()) writer.base58(authority, `authorities[${slot}]`);
  writer.zeros((MAX_AUTHORITIES - authorityCount) * KEY_SIZE);
  for (const [slot, vote] of votes.entries()) writeVote(writer, vote, slot);
  writer.zeros((MAX_AUTHORITIES - authorityCount) * AUTHORITY_VOTE_SIZE);
  return writer.toBytes();
}

function writeVote(writer: ByteWriter, vote: AuthorityVote, slot: number): void {
  writer
    .u64(vote.nextIndex, `votes[${slot}].nextIndex`)
    .u8(tagOf(LAST_VOTES, vote.lastVote, `votes[${slot}].lastVote`), `votes[${slot}].lastVote`)
    .zeros(7);
}
