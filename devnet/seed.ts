import { PublicKey } from '@solana/web3.js';
import { decodeTrackerHeader, encodeDepositEntry, encodeTrackerHeader, encodeWithdrawEntry } from '../src/chain/codec/accounts.js';
import { entryOffset, entrySize } from '../src/chain/codec/layout.js';
import { depositTrackerAddress, withdrawTrackerAddress } from '../src/chain/pda.js';
import type { TrackerHeader, TrackerKind } from '../src/chain/types.js';
import { checkInteger, type DevnetNode } from './node.js';
import { DevnetError } from './devnet-error.js';

/**
 * Test and bench affordance: `count` settled transfers written straight into both trackers, so
 * a read-cost test can build a 50,000-entry tracker without 50,000 transactions. Every seeded
 * transfer is Confirmed in full, claimed on the target and cleaned up on the source, with every
 * authority's yes vote; positions and settled_prefix move past them. Both trackers must be fully
 * settled (settled_prefix == entry_count, same entry_count on both chains) before seeding.
 */

export interface SeedOptions {
  /** Amount of every seeded transfer (default 1000). */
  amount?: bigint;
  sourceMint?: PublicKey | string;
  depositor?: PublicKey | string;
  recipient?: PublicKey | string;
}

interface TrackerAt {
  node: DevnetNode;
  kind: TrackerKind;
  address: string;
  header: TrackerHeader;
}

export function seedSettledDeposits(source: DevnetNode, target: DevnetNode, count: number, options: SeedOptions = {}): void {
  checkInteger(count, 'count', 0, 10_000_000);
  const deposits = trackerAt(source, 'DepositTracker', depositTrackerAddress(source.programId, target.chainId));
  const withdrawals = trackerAt(target, 'WithdrawTracker', withdrawTrackerAddress(target.programId, source.chainId));
  checkSeedable(deposits, withdrawals, count);
  const first = deposits.header.entryCount;
  const transfer = {
    amount: options.amount ?? 1_000n,
    recipient: keyOption(options.recipient, 'recipient'),
    sourceMint: keyOption(options.sourceMint, 'sourceMint'),
  };
  const allYes = (1 << deposits.header.authorityCount) - 1;
  const result = { kind: 'Confirmed' as const, amount: transfer.amount };
  const depositEntry = encodeDepositEntry({
    ...transfer,
    depositor: keyOption(options.depositor, 'depositor'),
    status: 'Finalized',
    cleanupCompleted: true,
    yesVotes: allYes,
    noVotes: 0,
    proposed: result,
    result,
    refundedAmount: 0n,
    depositSlot: BigInt(source.slot),
  });
  const withdrawEntry = encodeWithdrawEntry({
    ...transfer,
    status: 'Finalized',
    createdTokenAccount: 'Created',
    yesVotes: allYes,
    noVotes: 0,
    result,
    tokenAccount: PublicKey.unique().toBase58(),
    finalizedSlot: BigInt(target.slot),
  });
  writeSettled(deposits, depositEntry, first, count);
  writeSettled(withdrawals, withdrawEntry, first, count);
}

function trackerAt(node: DevnetNode, kind: TrackerKind, address: PublicKey): TrackerAt {
  const account = node.bank.account(address.toBase58());
  if (account === undefined) {
    throw new DevnetError(
      'DEVNET__INVALID_STATE',
      { account: address.toBase58(), reason: 'missing' },
      `${kind} ${address.toBase58()} does not exist on the ${node.name} chain: initialize both trackers (bootstrapWorld) before seeding`,
    );
  }
  return { node, kind, address: address.toBase58(), header: decodeTrackerHeader(account.data, kind, address.toBase58()) };
}

function checkSeedable(deposits: TrackerAt, withdrawals: TrackerAt, count: number): void {
  for (const tracker of [deposits, withdrawals]) {
    const { entryCount, settledPrefix, capacity } = tracker.header;
    if (settledPrefix !== entryCount) {
      invalidState(tracker, `has unsettled entries (settled_prefix ${settledPrefix}, entry_count ${entryCount}); seed before any traffic`);
    }
    if (entryCount + BigInt(count) > capacity) invalidState(tracker, `cannot take ${count} more entries: ${entryCount} of ${capacity} used`);
  }
  if (deposits.header.entryCount !== withdrawals.header.entryCount) {
    invalidState(deposits, `holds ${deposits.header.entryCount} entries, the WithdrawTracker ${withdrawals.header.entryCount}`);
  }
}

function writeSettled(tracker: TrackerAt, entry: Uint8Array, first: bigint, count: number): void {
  const size = entrySize(tracker.kind);
  const entries = new Uint8Array(size * count);
  for (let i = 0; i < count; i += 1) entries.set(entry, i * size);
  const entryCount = first + BigInt(count);
  const header: TrackerHeader = {
    ...tracker.header,
    entryCount,
    settledPrefix: entryCount,
    votes: tracker.header.votes.map(() => ({ nextIndex: entryCount, lastVote: 'Yes' as const })),
  };
  const journal = tracker.node.bank.journal();
  journal.writeData(tracker.address, entryOffset(tracker.kind, Number(first)), entries);
  journal.writeData(tracker.address, 0, encodeTrackerHeader(header));
  journal.commit();
}

function keyOption(value: PublicKey | string | undefined, option: string): string {
  if (value === undefined) return PublicKey.unique().toBase58();
  try {
    return new PublicKey(value).toBase58();
  } catch {
    throw new DevnetError('DEVNET__INVALID_OPTION', { option, reason: 'not a public key' }, `seed option ${option} is not a base58 public key`);
  }
}

function invalidState(tracker: TrackerAt, reason: string): never {
  throw new DevnetError(
    'DEVNET__INVALID_STATE',
    { account: tracker.address, reason },
    `${tracker.kind} ${tracker.address} on the ${tracker.node.name} chain ${reason}`,
  );
}
