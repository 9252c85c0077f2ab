import { Keypair, type PublicKey, type TransactionInstruction } from '@solana/web3.js';
import { sleep } from '../../../time.js';
import type { LeaseCheck, LeaseObservation, LeaseRelease, LeaseTaking, SigningLease } from '../../port/bridge-chains.js';
import { advanceLeaseInstructions, leaseAddress, leaseState, releaseLeaseInstructions, takeLeaseInstructions } from '../../lease-account.js';
import { agreedLease, leaseEverywhere, movedFrom, rivalLeaseTransactions, sameLease, type EndpointLease } from '../read/lease-evidence.js';
import { submitSmallTransaction, type SmallTransactionContext } from './small-transaction.js';

/**
 * The signing lease on the destination chain (docs/chain-client.md, "The lease"): reading it,
 * checking a holder's doubt, taking it (a free one, or over a quiet holder's value) and releasing
 * it. Nothing is decided on one endpoint's answer (../read/lease-evidence.ts): a loss needs two
 * endpoints agreeing or another instance's verified transaction moving the lease from the value
 * held; a taking is sent only when a second endpoint shows the lease as the first did, and counts
 * only when two endpoints show the value it produced and the lease's history shows no other
 * instance's lease transaction since the lease was seen. Each transaction
 * carries this process's instance mark (lease-account.ts) and is a small transaction
 * (./small-transaction.ts): a priority fee from the market, re-sent every RESEND_MS (longer while
 * sends fail) within LEASE_CONFIRM_TIMEOUT_MS, through the send-only paths too.
 */

/** Between status polls of a lease transaction. */
const POLL_INTERVAL_MS = 400;
/** Between sends of the same bytes while they have not landed (every endpoint, every send-only path). */
const RESEND_MS = 2_000;
/**
 * A lease transaction is followed at most this long (well inside a blockhash's lifetime, about a
 * minute). A taking that has not confirmed by then is counted as not taken (safe: the instance
 * stays a standby; if it did land, the next cycle reads a held lease and the history names it).
 */
const LEASE_CONFIRM_TIMEOUT_MS = 20_000;
/** Corroborated reads after a landing, LANDING_READ_GAP_MS apart: endpoints trail a landing by a slot or two. */
const LANDING_READS = 4;
const LANDING_READ_GAP_MS = 500;
/** System instructions cost 150 units each, the budget's two as many: 1,000 covers the largest lease transaction (five). */
const LEASE_UNIT_LIMIT = 1_000;
/** Release steps tried (the advance, then the withdrawal), each from a fresh read. */
const RELEASE_TRIES = 3;

/**
 * The destination chain's, as its votes have them (its bidder, its read endpoints and send-only
 * paths); `signed` holds this process's signatures, so its lease transactions are its own in the
 * history. The timing is the lease's own.
 */
export interface ChainLeaseOptions extends Omit<SmallTransactionContext, 'timing'> {
  /** The source chain's id: the lease's seed names it. */
  sourceChainId: number;
  /** The destination chain's endpoints (BRIDGE_TARGET_RPC_URL and its fallbacks): with one, its word is all there is. */
  endpoints: number;
  /** Tests only: faster status polling. */
  pollIntervalMs?: number;
  /** Tests only: the instance mark (a random key otherwise). */
  instance?: PublicKey;
}

export function createSigningLease(options: ChainLeaseOptions): SigningLease {
  const { rpc, signer, sourceChainId } = options;
  const authority = signer.publicKey;
  const address = leaseAddress(authority, sourceChainId);
  const instance = options.instance ?? Keypair.generate().publicKey;
  const alone = options.endpoints <= 1;
  const history = { rpc, address, authority, signed: options.signed };
  const pollMs = options.pollIntervalMs ?? POLL_INTERVAL_MS;
  const submit: SmallTransactionContext = {
    ...options,
    timing: { pollIntervalMs: pollMs, rebroadcastIntervalMs: RESEND_MS, confirmTimeoutMs: LEASE_CONFIRM_TIMEOUT_MS },
  };

  async function read(signal: AbortSignal, minContextSlot?: number): Promise<LeaseObservation> {
    const { slot, account } = await rpc.getAccountInfo(
      address,
      { commitment: 'confirmed', ...(minContextSlot === undefined ? {} : { minContextSlot }) },
      signal,
    );
    return { ...leaseState(account, authority), slot };
  }

  /**
   * The lease's instructions as a small transaction under LEASE_UNIT_LIMIT, against `durableValue`
   * (the value held: the instructions start with its advance) or a confirmed blockhash: the slot
   * it confirmed at, or why it did not.
   */
  async function land(
    instructions: TransactionInstruction[],
    durableValue: string | undefined,
    signal: AbortSignal,
  ): Promise<{ signature: string } & ({ slot: number } | { refused: string })> {
    const outcome = await submitSmallTransaction(
      submit,
      { instructions, unitLimit: LEASE_UNIT_LIMIT, ...(durableValue === undefined ? {} : { durableValue }) },
      signal,
    );
    const { signature } = outcome;
    if (outcome.kind === 'landed') return { signature, slot: outcome.slot };
    return { signature, refused: outcome.kind === 'landed_with_error' ? `landed with ${JSON.stringify(outcome.err)}` : outcome.reason };
  }

  /** Corroborated reads at or after `slot` until two endpoints agree on a state `keep` accepts; undefined when they never do. */
  async function agreed(
    slot: number,
    keep: (view: LeaseObservation) => boolean,
    signal: AbortSignal,
  ): Promise<{ agreed?: LeaseObservation; views: EndpointLease[] }> {
    let views: EndpointLease[] = [];
    for (let tries = 0; tries < LANDING_READS; tries++) {
      views = await leaseEverywhere(rpc, address, authority, slot, signal);
      const found = agreedLease(views, keep, alone);
      if (found !== undefined) return { agreed: found, views };
      await sleep(LANDING_READ_GAP_MS, signal);
    }
    return { views };
  }

  async function check(value: string, seen: LeaseObservation, signal: AbortSignal): Promise<LeaseCheck> {
    const views = await leaseEverywhere(rpc, address, authority, seen.slot, signal);
    const other = agreedLease(views, (view) => view.state !== 'held' || view.value !== value, false);
    if (other !== undefined)
      return { kind: 'lost', seen: other, proof: `two endpoints agree at slot ${other.slot}: the lease reads ${describe(other)}` };
    const rivals = (await rivalLeaseTransactions(history, 0, signal)) ?? [];
    const moved = movedFrom(rivals, address, authority, value);
    if (moved !== undefined)
      return {
        kind: 'lost',
        seen: await read(signal, moved.slot),
        proof: `transaction ${moved.signature} (slot ${moved.slot}), signed by the key and not by this process, moved the lease on from this instance's value`,
      };
    return {
      kind: 'doubt',
      why: `one endpoint read the lease as ${describe(seen)} at slot ${seen.slot}; the endpoints read ${views.map((view) => `${view.endpoint}: ${describe(view)}`).join(', ') || 'nothing at or after that slot'}`,
    };
  }

  async function take(seen: LeaseObservation, signal: AbortSignal): Promise<LeaseTaking> {
    // What the read saw, a second endpoint must see too: one endpoint saying "free" must not make this instance sign beside the holder.
    const views = await leaseEverywhere(rpc, address, authority, seen.slot, signal);
    if (seen.state === 'unusable') {
      const agreed = agreedLease(views, (view) => view.state === 'unusable', alone) !== undefined;
      const others = views.find((view) => view.state !== 'unusable');
      if (agreed || others === undefined) return { taken: false, seen, why: `the lease account is unusable: ${seen.reason}` };
      return {
        taken: false,
        seen: others,
        why: `one endpoint reads the lease unusable (${seen.reason}), ${others.endpoint} reads it ${describe(others)}: a doubt on that endpoint`,
      };
    }
    if (agreedLease(views, (view) => sameLease(view, seen), alone) === undefined) {
      return {
        taken: false,
        seen,
        why: `no second endpoint shows the lease ${describe(seen)} (${views.map((view) => `${view.endpoint}: ${describe(view)}`).join(', ') || 'none answered at or after its slot'})`,
      };
    }
    const over = seen.state === 'held' ? seen.value : undefined;
    const instructions =
      over === undefined ? takeLeaseInstructions(authority, sourceChainId, instance) : advanceLeaseInstructions(authority, sourceChainId, instance);
    const landed = await land(instructions, over, signal);
    const { signature } = landed;
    const what = `${over === undefined ? 'taking' : 'taking over'} (${signature})`;
    if ('refused' in landed) return { taken: false, seen: await read(signal, seen.slot), why: `${what} ${landed.refused}` };
    // The endpoint's "confirmed" is one word: two endpoints must show the lease held by a new value.
    const after = await agreed(landed.slot, (view) => view.state === 'held' && view.value !== over, signal);
    if (after.agreed?.state !== 'held')
      return {
        taken: false,
        seen: after.views[0] ?? seen,
        why: `${what} was reported confirmed, but no two endpoints show the lease held by a new value at slot ${landed.slot} or later`,
      };
    // And no other instance's lease transaction since the lease was seen: that one moved it, not this.
    const rival = (await rivalLeaseTransactions(history, seen.slot, signal))?.[0];
    if (rival !== undefined)
      return {
        taken: false,
        seen: after.agreed,
        why: `${what}: another instance's lease transaction ${rival.signature} landed at slot ${rival.slot}`,
      };
    return { taken: true, value: after.agreed.value, slot: after.agreed.slot, signature };
  }

  /**
   * Bound to the value held: first the advance against it (void unless the lease still holds it,
   * so a stale or deceived instance's release moves nothing), then the withdrawal of the whole
   * balance from the value that advance produced, read at or after its slot. Lamports someone
   * added in between refuse one withdrawal; the next reads again. At most RELEASE_TRIES each.
   */
  async function release(value: string, signal: AbortSignal): Promise<LeaseRelease> {
    const advanced = await step(signal, async (): Promise<Step<{ slot: number; signature: string }>> => {
      const seen = await read(signal);
      if (seen.state !== 'held' || seen.value !== value) return { final: `the lease is not this instance's any more (it reads ${describe(seen)})` };
      const landed = await land(advanceLeaseInstructions(authority, sourceChainId, instance), value, signal);
      const { signature } = landed;
      return 'refused' in landed
        ? { refused: `advancing from the value held (${signature}) ${landed.refused}` }
        : { done: { slot: landed.slot, signature } };
    });
    if (typeof advanced === 'string') return { released: false, why: advanced };
    const closed = await step(signal, async (): Promise<Step<{ signature: string; slot: number }>> => {
      const seen = await read(signal, advanced.slot);
      if (seen.state !== 'held') return { final: `the lease reads ${describe(seen)} after this instance's advance` };
      const landed = await land(releaseLeaseInstructions(authority, sourceChainId, seen.lamports), undefined, signal);
      const { signature } = landed;
      return 'refused' in landed ? { refused: `releasing (${signature}) ${landed.refused}` } : { done: { signature, slot: landed.slot } };
    });
    return typeof closed === 'string' ? { released: false, why: closed } : { released: true, advance: advanced.signature, ...closed };
  }

  /** One release step, tried at most RELEASE_TRIES times: what it did, or why not. */
  async function step<T>(signal: AbortSignal, attempt: () => Promise<Step<T>>): Promise<T | string> {
    let why = '';
    for (let tries = 0; tries < RELEASE_TRIES; tries++) {
      const outcome = await attempt();
      if ('done' in outcome) return outcome.done;
      if ('final' in outcome) return outcome.final;
      why = outcome.refused;
      await sleep(pollMs, signal);
    }
    return why;
  }

  return { address: address.toBase58(), read, check, take, release };
}

type Step<T> = { done: T } | { refused: string } | { final: string };

function describe(view: LeaseObservation): string {
  return view.state === 'held' ? `held by ${view.value}` : view.state === 'free' ? 'free' : `unusable (${view.reason})`;
}
