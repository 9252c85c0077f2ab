import bs58 from 'bs58';
import { sleep } from '../../../time.js';
import type { AuthoritySigner } from '../../../signer/authority-signer.js';
import type { LeaseObservation, LeaseRelease, LeaseTaking, SigningLease } from '../../port/bridge-chains.js';
import { leaseAddress, leaseState, releaseLeaseInstructions, takeLeaseInstructions, takeOverLeaseInstructions } from '../../lease-account.js';
import { preflightFailure } from '../../rpc/rpc-failure.js';
import type { ChainRpc } from '../../rpc/chain-rpc.js';
import type { SignedSignatures } from '../read/authority-history.js';
import { signTransaction } from '../sign-transaction.js';

/**
 * The signing lease on the destination chain (docs/chain-client.md, "The lease"): reading it,
 * taking it (a free one, or over a quiet holder's value) and releasing it. Each operation is one
 * small transaction the authority signs and pays (5,000 lamports, no priority fee), sent with
 * preflight and followed until confirmed, at most LEASE_CONFIRM_TIMEOUT_MS.
 *
 * Nothing is taken on one answer's word: a taking counts only when its own transaction is
 * confirmed without error AND a read of the account at or after that slot shows a nonce; the
 * value it shows is the holder's mark from then on, read again at every cycle. A refused or
 * unconfirmed taking is "not taken": the instance stays a standby, which is always safe.
 */

/** Between status polls of a lease transaction. */
const POLL_INTERVAL_MS = 400;

/**
 * A lease transaction is followed at most this long. A taking that has not confirmed by then is
 * counted as not taken (safe: the instance stays a standby; if it did land, the next cycle reads
 * a held lease and waits the quiet window, then takes it over from itself).
 */
const LEASE_CONFIRM_TIMEOUT_MS = 20_000;

/** Releases tried, each from a fresh read of the account. */
const RELEASE_TRIES = 3;

export interface ChainLeaseOptions {
  rpc: ChainRpc;
  signer: AuthoritySigner;
  /** The source chain's id: the lease's seed names it. */
  sourceChainId: number;
  /** This process's signatures on the chain: its lease transactions are its own in the history. */
  signed: SignedSignatures;
  /** Tests only: faster status polling. */
  pollIntervalMs?: number;
}

export function createSigningLease(options: ChainLeaseOptions): SigningLease {
  const { rpc, signer, sourceChainId } = options;
  const authority = signer.publicKey;
  const address = leaseAddress(authority, sourceChainId);

  async function read(signal: AbortSignal, minContextSlot?: number): Promise<LeaseObservation> {
    const { slot, account } = await rpc.getAccountInfo(address, { commitment: 'confirmed', ...(minContextSlot === undefined ? {} : { minContextSlot }) }, signal);
    return { ...leaseState(account, authority), slot };
  }

  /** Sends the lease transaction and follows it: the slot it confirmed at, or why it did not. */
  async function land(wire: Uint8Array, signature: string, signal: AbortSignal): Promise<{ slot: number } | { refused: string }> {
    options.signed.add(signature);
    try {
      await rpc.sendTransaction(wire, { skipPreflight: false, preflightCommitment: 'confirmed' }, signal);
    } catch (err) {
      const refusal = preflightFailure(err);
      if (refusal === undefined) throw err;
      return { refused: `refused in preflight: ${JSON.stringify(refusal.transactionError)}` };
    }
    const deadline = Date.now() + LEASE_CONFIRM_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const { slot, status } = await rpc.getSignatureStatus(signature, { searchTransactionHistory: false }, signal);
      if (status !== null && status.err !== null) return { refused: `landed with ${JSON.stringify(status.err)}` };
      if (status?.confirmationStatus === 'confirmed' || status?.confirmationStatus === 'finalized') return { slot: Math.max(slot, status.slot) };
      await sleep(options.pollIntervalMs ?? POLL_INTERVAL_MS, signal);
    }
    return { refused: `not confirmed within ${LEASE_CONFIRM_TIMEOUT_MS / 1000} s` };
  }

  async function signed(instructions: ReturnType<typeof takeLeaseInstructions>, durableValue: string | undefined, signal: AbortSignal) {
    const { blockhash, lastValidBlockHeight } = durableValue === undefined ? await rpc.getLatestBlockhash('confirmed', signal) : { blockhash: durableValue, lastValidBlockHeight: 0 };
    const { wire, signature } = await signTransaction(signer, instructions, blockhash, lastValidBlockHeight);
    return { wire, signature: bs58.encode(signature) };
  }

  async function take(seen: LeaseObservation, signal: AbortSignal): Promise<LeaseTaking> {
    if (seen.state === 'unusable') return { taken: false, seen, why: `the lease account is unusable: ${seen.reason}` };
    const over = seen.state === 'held' ? seen.value : undefined;
    const instructions = over === undefined ? takeLeaseInstructions(authority, sourceChainId) : takeOverLeaseInstructions(authority, sourceChainId);
    const { wire, signature } = await signed(instructions, over, signal);
    const landed = await land(wire, signature, signal);
    if ('refused' in landed) return { taken: false, seen: await read(signal, seen.slot), why: `${over === undefined ? 'taking' : 'taking over'} (${signature}) ${landed.refused}` };
    // The transaction says it landed; the account must say so too, at or after that slot.
    const after = await read(signal, landed.slot);
    if (after.state !== 'held') return { taken: false, seen: after, why: `transaction ${signature} confirmed but the lease reads ${after.state} at slot ${after.slot}` };
    return { taken: true, value: after.value, slot: after.slot, signature };
  }

  /**
   * Withdraws the whole balance as read, from a fresh read each time: lamports someone added in
   * between, or a lease taken in the current blockhash (NonceBlockhashNotExpired), refuse one
   * try; the next reads again. At most RELEASE_TRIES.
   */
  async function release(value: string, signal: AbortSignal): Promise<LeaseRelease> {
    let why = '';
    for (let tries = 0; tries < RELEASE_TRIES; tries++) {
      const seen = await read(signal);
      if (seen.state !== 'held' || seen.value !== value) return { released: false, why: `the lease is not this instance's any more (it reads ${seen.state === 'held' ? `another value, ${seen.value}` : seen.state})` };
      const { wire, signature } = await signed(releaseLeaseInstructions(authority, sourceChainId, seen.lamports), undefined, signal);
      const landed = await land(wire, signature, signal);
      if (!('refused' in landed)) return { released: true, signature, slot: landed.slot };
      why = `releasing (${signature}) ${landed.refused}`;
      await sleep(options.pollIntervalMs ?? POLL_INTERVAL_MS, signal);
    }
    return { released: false, why };
  }

  return { address: address.toBase58(), read, take, release };
}
