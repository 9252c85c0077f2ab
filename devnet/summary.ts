import { decodeDepositEntries, decodeTrackerHeader, decodeWithdrawEntries } from '../src/chain/codec/accounts.js';
import { entryOffset } from '../src/chain/codec/layout.js';
import type { TrackerKind } from '../src/chain/types.js';
import type { ChainPair } from './chain-pair.js';
import type { World } from './world/bootstrap.js';

/** Transfers by phase, read straight from both chains' trackers (for the demo's status line). */

export interface TransferSummary {
  /** Source entries (deposit). */
  deposited: number;
  /** Target entries finalized by ack_deposit, by result. */
  confirmed: number;
  rejected: number;
  /** Target entries the user withdrew (created_token_account Created). */
  claimed: number;
  /** Source entries finalized by ack_withdraw. */
  relayed: number;
  /** Source entries cleaned up. */
  cleanedUp: number;
}

export function summarizeTransfers(pair: ChainPair, world: World): TransferSummary {
  const summary: TransferSummary = { deposited: 0, confirmed: 0, rejected: 0, claimed: 0, relayed: 0, cleanedUp: 0 };
  const deposits = trackerEntries(pair.source.bank.account(world.source.depositTracker)?.data, 'DepositTracker', world.source.depositTracker);
  if (deposits !== undefined) {
    const entries = decodeDepositEntries(deposits, world.source.depositTracker, 0);
    summary.deposited = entries.length;
    summary.relayed = entries.filter((entry) => entry.status === 'Finalized').length;
    summary.cleanedUp = entries.filter((entry) => entry.cleanupCompleted).length;
  }
  const withdrawals = trackerEntries(pair.target.bank.account(world.target.withdrawTracker)?.data, 'WithdrawTracker', world.target.withdrawTracker);
  if (withdrawals !== undefined) {
    const finalized = decodeWithdrawEntries(withdrawals, world.target.withdrawTracker, 0).filter((entry) => entry.status === 'Finalized');
    summary.confirmed = finalized.filter((entry) => entry.result.kind === 'Confirmed').length;
    summary.rejected = finalized.filter((entry) => entry.result.kind === 'Rejected').length;
    summary.claimed = finalized.filter((entry) => entry.createdTokenAccount === 'Created').length;
  }
  return summary;
}

/** The used part of a tracker's entries (`0 .. entry_count`), without copying. */
function trackerEntries(data: Uint8Array | undefined, kind: TrackerKind, address: string): Uint8Array | undefined {
  if (data === undefined) return undefined;
  const entryCount = Number(decodeTrackerHeader(data, kind, address).entryCount);
  return data.subarray(entryOffset(kind, 0), entryOffset(kind, entryCount));
}

export function formatSummary(summary: TransferSummary): string {
  return [
    `deposited ${summary.deposited}`,
    `withdraw finalized ${summary.confirmed} Confirmed / ${summary.rejected} Rejected`,
    `claimed ${summary.claimed}`,
    `relayed ${summary.relayed}`,
    `cleaned up ${summary.cleanedUp}`,
  ].join(' · ');
}
