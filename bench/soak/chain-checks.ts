import { decodeDepositEntries, decodeTrackerHeader } from '../../src/chain/codec/accounts.js';
import { entryOffset } from '../../src/chain/codec/layout.js';
import type { ChainPair } from '../../devnet/chain-pair.js';
import type { World } from '../../devnet/world/bootstrap.js';

/** What the soak checks on the devnet's ledger directly: no RPC call, no injected fault. */

export function authorityLamports(pair: ChainPair, world: World): bigint[] {
  return world.authorities.map(
    ({ publicKey }) => (pair.source.bank.account(publicKey)?.lamports ?? 0n) + (pair.target.bank.account(publicKey)?.lamports ?? 0n),
  );
}

export function completedTransfers(pair: ChainPair, world: World): { total: number; completed: number } {
  const data = pair.source.bank.account(world.source.depositTracker)?.data;
  if (data === undefined) return { total: 0, completed: 0 };
  const header = decodeTrackerHeader(data, 'DepositTracker', world.source.depositTracker);
  const count = Number(header.entryCount);
  const entries = decodeDepositEntries(
    data.subarray(entryOffset('DepositTracker', 0), entryOffset('DepositTracker', count)),
    world.source.depositTracker,
    0,
  );
  return { total: count, completed: entries.filter((entry) => entry.status === 'Finalized' && entry.cleanupCompleted).length };
}
