import { ownNextIndex } from '../../../src/chain/port/authority-position.js';
import { PublicKey } from '@solana/web3.js';
import { decodeDepositEntries, decodeTokenPair, decodeTrackerHeader, decodeWithdrawEntries } from '../../../src/chain/codec/accounts.js';
import { entryOffset } from '../../../src/chain/codec/layout.js';
import { leaseAddress } from '../../../src/chain/lease-account.js';
import { tokenPairAddress } from '../../../src/chain/pda.js';
import type { DepositEntry, TokenPair, TrackerHeader, TrackerKind, WithdrawEntry } from '../../../src/chain/types.js';
import type { DevnetNode } from '../../../devnet/node.js';
import { baseFeesPaid, pairLamports, type PairLamports } from '../../support/base-fees.js';
import type { DevnetBridge } from './devnet-bridge.js';

/**
 * What the chains hold, read from the devnet's ledger and decoded with the server's own codecs:
 * the assertions of the integration tests are about on-chain state, not about what the crank
 * says it did. Reading the ledger directly keeps the tests' reads out of injected RPC faults.
 */

export interface Tracker<E> {
  header: TrackerHeader;
  /** Entries 0 .. entry_count. */
  entries: E[];
}

export function depositTracker(bridge: DevnetBridge): Tracker<DepositEntry> {
  const address = bridge.depositTracker.toBase58();
  const data = accountData(bridge.pair.source, address);
  const header = decodeTrackerHeader(data, 'DepositTracker', address);
  return { header, entries: decodeDepositEntries(usedEntries(data, 'DepositTracker', header), address, 0) };
}

/** The destination's WithdrawTracker at the head, or in the bank of `commitment` (what a preflight there sees). */
export function withdrawTracker(bridge: DevnetBridge, commitment: 'processed' | 'confirmed' = 'processed'): Tracker<WithdrawEntry> {
  const address = bridge.withdrawTracker.toBase58();
  const data = accountData(bridge.pair.target, address, commitment);
  const header = decodeTrackerHeader(data, 'WithdrawTracker', address);
  return { header, entries: decodeWithdrawEntries(usedEntries(data, 'WithdrawTracker', header), address, 0) };
}

export function tokenPair(bridge: DevnetBridge, sourceMint: string): TokenPair {
  const address = tokenPairAddress(bridge.programId, bridge.world.source.chainId, new PublicKey(sourceMint)).toBase58();
  return decodeTokenPair(accountData(bridge.pair.target, address), address);
}

/** Authority k's own position on a tracker (rule 3.4). */
export function nextIndexOf(tracker: Tracker<unknown>, bridge: DevnetBridge, k: number): number {
  return ownNextIndex(tracker.header, bridge.authorities[k]!.publicKey.toBase58(), {
    chain: tracker.header.kind === 'DepositTracker' ? 'source' : 'target',
  });
}

/** The vote-mask bits of the given authority slots. */
export function votersMask(...slots: number[]): number {
  return slots.reduce((mask, slot) => mask | (1 << slot), 0);
}

/**
 * Transactions the chains landed with authority k as fee payer since `since` (its lamports on
 * both chains, its signing lease's included, then): the rent its lease holds is its own, not a fee.
 */
export function landedTransactionsPaidBy(bridge: DevnetBridge, k: number, since: PairLamports & { lease?: bigint }): number {
  const lease = leaseLamports(bridge, k) - (since.lease ?? 0n);
  return baseFeesPaid(bridge.pair, bridge.authorities[k]!.publicKey, { ...since, target: since.target - lease });
}

export function authorityBalances(bridge: DevnetBridge, k: number): PairLamports & { lease?: bigint } {
  return { ...pairLamports(bridge.pair, bridge.authorities[k]!.publicKey), lease: leaseLamports(bridge, k) };
}

/** Lamports in authority k's signing lease on the destination chain (0: released or never taken). */
export function leaseLamports(bridge: DevnetBridge, k: number): bigint {
  return bridge.pair.target.getAccount(leaseAddress(bridge.authorities[k]!.publicKey, bridge.pair.source.chainId).toBase58())?.lamports ?? 0n;
}

/** The status the chain recorded for a signature: undefined when it never landed. */
export function landedStatus(bridge: DevnetBridge, signature: string) {
  return bridge.pair.source.bank.signatureStatus(signature) ?? bridge.pair.target.bank.signatureStatus(signature);
}

function accountData(node: DevnetNode, address: string, commitment: 'processed' | 'confirmed' = 'processed'): Uint8Array {
  const account = commitment === 'processed' ? node.getAccount(address) : node.bank.at(commitment).account(address);
  if (account === undefined) throw new Error(`no account ${address} in the ${node.name} chain's ${commitment} bank`);
  return account.data;
}

function usedEntries(data: Uint8Array, kind: TrackerKind, header: TrackerHeader): Uint8Array {
  return data.subarray(entryOffset(kind, 0), entryOffset(kind, Number(header.entryCount)));
}
