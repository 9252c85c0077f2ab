import { PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import type { LeaseObservation } from '../../port/bridge-chains.js';
import { ed25519PublicKeyObject, verifiesEd25519 } from '../../../signer/ed25519.js';
import { isLeaseOperation, leaseState, movesLeaseFrom } from '../../lease-account.js';
import type { ChainRpc } from '../../rpc/chain-rpc.js';
import { isHistoryUnavailable } from '../../rpc/rpc-failure.js';
import type { SignedSignatures } from './signed-signatures.js';

/**
 * What the signing lease's decisions rest on (docs/chain-client.md, "The lease"): never one
 * endpoint's answer. Two kinds of proof, as for the nonce pool's moves:
 *
 * - Corroborated reads: the lease account as every endpoint in service shows it, at or after one
 *   slot; a state counts when two different endpoints agree on it. With one endpoint configured
 *   there is nobody to corroborate it: its word is all there is (the limit is written down).
 * - Another instance's lease transaction, from the lease account's history: its signatures
 *   verify (the fee payer's is its id, the key's verifies over the message), this process did not
 *   sign it, and it is one of the lease's own shapes. A node can hide such a transaction, never
 *   make one up.
 *
 * Bounds: one getAccountInfo per endpoint per corroborated read; one history page of
 * LEASE_HISTORY_PAGE entries and at most LEASE_HISTORY_LOOKUPS getTransaction per history look.
 */

const LEASE_HISTORY_PAGE = 20;
const LEASE_HISTORY_LOOKUPS = 8;

/** The lease as one endpoint showed it. */
export type EndpointLease = LeaseObservation & { endpoint: string };

/** The lease account on every endpoint in service, each answer at or after `minSlot` kept. */
export async function leaseEverywhere(
  rpc: ChainRpc,
  address: PublicKey,
  authority: PublicKey,
  minSlot: number,
  signal: AbortSignal,
): Promise<EndpointLease[]> {
  const answers = await rpc.getAccountInfoEverywhere(address, 'confirmed', signal);
  return answers
    .filter((answer) => answer.slot >= minSlot)
    .map(({ account, slot, endpoint }) => ({ ...leaseState(account, authority), slot, endpoint }));
}

export function sameLease(a: LeaseObservation, b: LeaseObservation): boolean {
  if (a.state !== b.state) return false;
  return a.state !== 'held' || (b.state === 'held' && a.value === b.value);
}

/**
 * A state of the lease that two different endpoints agree on (the one at the higher slot), among
 * those `keep` accepts; with `alone` (one endpoint configured) the single answer. Undefined: no
 * such agreement.
 */
export function agreedLease(
  views: readonly EndpointLease[],
  keep: (view: LeaseObservation) => boolean,
  alone: boolean,
): LeaseObservation | undefined {
  const kept = views.filter(keep);
  if (alone && views.length === 1) return kept[0];
  for (const view of kept) {
    const other = kept.find((candidate) => candidate.endpoint !== view.endpoint && sameLease(candidate, view));
    if (other !== undefined) return other.slot > view.slot ? other : view;
  }
  return undefined;
}

/** Another instance's verified lease transaction. */
export interface RivalLeaseTransaction {
  signature: string;
  slot: number;
  message: Uint8Array;
}

export interface LeaseHistoryOptions {
  rpc: ChainRpc;
  address: PublicKey;
  authority: PublicKey;
  signed: SignedSignatures;
}

/**
 * Lease transactions of the key that this process did not sign, listed in the lease account's
 * history at or after `sinceSlot`, newest first, each verified. Undefined when no endpoint keeps
 * history (nothing can be proven that way, and nothing is assumed).
 */
export async function rivalLeaseTransactions(
  { rpc, address, authority, signed }: LeaseHistoryOptions,
  sinceSlot: number,
  signal: AbortSignal,
): Promise<RivalLeaseTransaction[] | undefined> {
  let listed: Awaited<ReturnType<typeof rpc.getSignaturesForAddress>>;
  try {
    listed = await rpc.getSignaturesForAddress(address, { limit: LEASE_HISTORY_PAGE }, signal);
  } catch (err) {
    if (isHistoryUnavailable(err)) return undefined;
    throw err;
  }
  const candidates = listed
    .filter((entry) => entry.slot >= sinceSlot && entry.err === null && !signed.has(entry.signature))
    .slice(0, LEASE_HISTORY_LOOKUPS);
  const found: RivalLeaseTransaction[] = [];
  for (const { signature, slot } of candidates) {
    const transaction = await rpc.getTransactionSignatures(signature, signal);
    if (transaction === null) continue;
    const [payer] = transaction.signers;
    const key = transaction.signers.find((signer) => signer.key === authority.toBase58());
    const genuine = payer !== undefined && bs58.encode(payer.signature) === signature && key !== undefined && verifies(transaction.message, key);
    if (genuine && isLeaseOperation(transaction.message, address, authority)) found.push({ signature, slot, message: transaction.message });
  }
  return found;
}

/** The first of `rivals` that moved the lease on from `value`: another instance took it from its holder. */
export function movedFrom(
  rivals: readonly RivalLeaseTransaction[],
  address: PublicKey,
  authority: PublicKey,
  value: string,
): RivalLeaseTransaction | undefined {
  return rivals.find((rival) => movesLeaseFrom(rival.message, address, authority, value));
}

function verifies(message: Uint8Array, { key, signature }: { key: string; signature: Uint8Array }): boolean {
  return verifiesEd25519(ed25519PublicKeyObject(new PublicKey(key)), message, signature);
}
