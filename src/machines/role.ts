import type { AuthorityView, NonceMove } from '../chain/port/bridge-chains.js';
import type { ForeignSignerPolicy } from '../config/config.js';
import { CHAINS, type ChainSide, chainName } from '../domain.js';

/*
 * The role: which instance of a signer submits (docs/crank.md, "Role"). The chain is the only
 * shared state: an instance learns that another one signs with its key only from the key's
 * landed transactions, which each cycle's read reports (those this process did not sign). A
 * standby reads, plans and reports but submits nothing; it takes over once no such transaction
 * has landed for the quiet window. Another signer seen while this instance is active is a second
 * signer: counted, reported, and under BRIDGE_ON_FOREIGN_SIGNER=halt the end of submitting.
 *
 * Why the window is measured on this process's clock between its own reads, not by slots: each
 * read of the key's history is complete up to the slot it was served at, so "no transaction of
 * the other signer in any read since read k" is a fact about the ledger; only the length of that
 * stretch is timed, by one clock, so no clock of another host is compared and no slot duration
 * is assumed.
 */

/**
 * The quiet window is QUIET_POLL_INTERVALS poll intervals plus QUIET_MARGIN_MS: an active
 * instance with work lands a transaction at least once per poll interval plus its cycle (its
 * read, a send and its confirmation), and the history reads at confirmed can trail the landing
 * by a slot or two. The margin also covers a rollout's overlap on an idle bridge (see
 * `initialRole`).
 */
const QUIET_POLL_INTERVALS = 3;
const QUIET_MARGIN_MS = 10_000;

export function quietWindowMs(pollIntervalMs: number): number {
  return QUIET_POLL_INTERVALS * pollIntervalMs + QUIET_MARGIN_MS;
}

export interface RoleSettings {
  /** BRIDGE_HANDOFF_SECS in ms; 0: no handoff, every instance signs from the start. */
  handoffMs: number;
  pollIntervalMs: number;
}

/**
 * Every instance starts as a standby (unless the handoff is off): an active instance with
 * nothing to do leaves no trace on the chain, so only waiting out the quiet window tells a
 * new instance that no other one is about to sign.
 */
export function initialRole(settings: RoleSettings): RoleFacts {
  return {
    role: settings.handoffMs === 0 ? 'active' : 'standby',
    sinceMs: null,
    quietSinceMs: null,
    heardSinceMs: null,
    extraQuietMs: 0,
    otherSigner: null,
    waitReason: null,
  };
}

/**
 * `taking_over`: `lease` says how (absent: the quiet window alone, no lease in use; `released`:
 * free after a holder was seen; `free`: free and never seen held). `lease_lost`: this instance
 * held the lease and `proof` shows another instance took it (docs/chain-client.md "The lease"):
 * a second signer, and this one stands by at once.
 */
export type RoleChange =
  | { kind: 'standing_by'; other: KeyUse }
  | { kind: 'taking_over'; quietMs: number; lease?: 'released' | 'free' | 'taken_over' }
  | { kind: 'lease_lost'; holder: string | null; proof: string };

export interface RoleDecision<T extends KeyUse> {
  facts: RoleFacts;
  /** Transactions counted and reported as a second signer: those that landed while this instance was active. */
  foreign: T[];
  change: RoleChange | null;
}

/**
 * The role after one read that reported `seen` (the key's new transactions this process did
 * not sign, in KeyUse order), at `atMs`. Active: each is a second signer (counted and reported),
 * and the instance stands by. Standby: they are the other instance's, and restart the quiet
 * window; a read after the window has passed without any takes over.
 *
 * @param random uniform in [0, 1), Math.random in production: draws `extraQuietMs`
 */
export function roleAfterRead<T extends KeyUse>(
  current: RoleFacts,
  seen: readonly T[],
  settings: RoleSettings,
  atMs: number,
  random: () => number = Math.random,
): RoleDecision<T> {
  const facts: RoleFacts = {
    ...current,
    sinceMs: current.sinceMs ?? atMs,
    quietSinceMs: current.quietSinceMs ?? atMs,
    heardSinceMs: current.heardSinceMs ?? atMs,
  };
  if (settings.handoffMs === 0) return { facts, foreign: [...seen], change: null };
  const windowMs = quietWindowMs(settings.pollIntervalMs);
  const latest = seen[0];
  if (latest !== undefined) {
    const wasStandby = facts.role === 'standby';
    const standby: RoleFacts = {
      role: 'standby',
      sinceMs: wasStandby ? facts.sinceMs : atMs,
      quietSinceMs: atMs,
      heardSinceMs: atMs,
      extraQuietMs: wasStandby ? facts.extraQuietMs : Math.floor(random() * windowMs),
      otherSigner: watch(wasStandby ? facts.otherSigner : null, latest, atMs),
      waitReason: 'other_signer',
    };
    if (wasStandby) return { facts: standby, foreign: [], change: null };
    return { facts: standby, foreign: [...seen], change: { kind: 'standing_by', other: latest } };
  }
  const quietMs = atMs - facts.quietSinceMs!;
  if (facts.role === 'standby' && atMs >= mayTakeOverAtMs(facts, settings, atMs)) {
    const active: RoleFacts = { ...facts, role: 'active', sinceMs: atMs, extraQuietMs: 0, otherSigner: null, waitReason: null };
    return { facts: active, foreign: [], change: { kind: 'taking_over', quietMs } };
  }
  return { facts, foreign: [], change: null };
}

/**
 * How many quiet windows, from the latest read that saw another signer (or the first read),
 * incomplete history can hold a standby in nonce mode: the nonces are the signal there (another
 * instance in nonce mode cannot sign without moving one), and they stayed quiet.
 */
export const HISTORY_DOUBT_WINDOWS = 2;

/**
 * A read whose history left entries unchecked (its bounds, under traffic that lists the key) is
 * not a quiet one: whether the other instance signed in them is unknown, so a standby's quiet
 * window starts again from it. With `nonceSignal` (every chain in nonce mode, so another instance
 * must move a nonce to sign, and any move restarts the window as a sighting), it starts again at
 * most until HISTORY_DOUBT_WINDOWS windows after the latest sighting: spam that keeps the history
 * incomplete cannot hold a standby longer. An active instance goes on: unknown is not a second
 * signer. `restarted`: the window started again for this reason (a warn line and a metric say so).
 */
export function afterUnknownHistory(
  facts: RoleFacts,
  authority: AuthorityView,
  settings: RoleSettings,
  atMs: number,
  nonceSignal: boolean,
): { facts: RoleFacts; restarted: boolean } {
  const unknown = CHAINS.some((chain) => authority[chain].historyIncomplete === true);
  if (!unknown || facts.role !== 'standby' || settings.handoffMs === 0) return { facts, restarted: false };
  const heardSinceMs = facts.heardSinceMs ?? atMs;
  const capMs = heardSinceMs + (HISTORY_DOUBT_WINDOWS - 1) * quietWindowMs(settings.pollIntervalMs);
  const quietSinceMs = nonceSignal ? Math.max(facts.quietSinceMs ?? atMs, Math.min(atMs, capMs)) : atMs;
  const restarted = quietSinceMs !== facts.quietSinceMs;
  return { facts: { ...facts, heardSinceMs, quietSinceMs, waitReason: restarted ? 'history_incomplete' : facts.waitReason }, restarted };
}

/**
 * When a standby may take over: once the quiet window (plus its extra) has passed since the
 * latest read that saw another signer, at the first read from then on; each further sighting
 * moves it later. Before its first read the window has not started: `nowMs` stands for that read.
 */
export function mayTakeOverAtMs(facts: RoleFacts, settings: RoleSettings, nowMs: number): number {
  return (facts.quietSinceMs ?? nowMs) + quietWindowMs(settings.pollIntervalMs) + facts.extraQuietMs;
}

function watch(previous: OtherSigner | null, latest: KeyUse, atMs: number): OtherSigner {
  return { ...latest, activeSinceMs: previous?.activeSinceMs ?? atMs, lastSeenAtMs: atMs };
}

/** Whether this instance submits. */
export type CrankRole = 'active' | 'standby';

export const CRANK_ROLES: readonly CrankRole[] = ['active', 'standby'];

export interface ForeignTransaction extends KeyUse {
  seenAtMs: number;
}

/** The other instance a standby watches: its latest transaction and since when it has been seen signing. */
interface OtherSigner extends KeyUse {
  /** The read that first saw it signing in this standby stretch. */
  activeSinceMs: number;
  /** The latest read that saw a new transaction of it. */
  lastSeenAtMs: number;
}

export interface RoleFacts {
  role: CrankRole;
  /** When this role began; null before the first read. */
  sinceMs: number | null;
  /** The latest read that saw another signer or left the history unchecked, or the first read: the quiet window runs from here. */
  quietSinceMs: number | null;
  /** The latest read that saw another signer, or the first read: incomplete history holds a standby in nonce mode at most HISTORY_DOUBT_WINDOWS windows from here. */
  heardSinceMs: number | null;
  /**
   * Added to the quiet window after this instance stood by on seeing another signer while it was
   * active: uniform in [0, window), so that two instances that stood by on each other's
   * transactions do not take over in the same instant again. 0 otherwise.
   */
  extraQuietMs: number;
  otherSigner: OtherSigner | null;
  /** Why a standby's quiet window last started again: another signer seen, or history left unchecked; null: neither yet. */
  waitReason: WaitReason | null;
}

export type WaitReason = 'other_signer' | 'history_incomplete';

/**
 * A transaction signed with the key but not by this process, as a read reports it: the
 * destination chain's first, each chain's newest first (slots of two chains do not compare).
 * Always a proven one (docs/chain-client.md, "Who signs: proof, not reports"): a verified
 * transaction, with the move of the pool's nonce it made when the pool's reads saw it, or a
 * move two endpoints corroborated.
 */
export interface KeyUse {
  chain: ChainSide;
  /** Absent for a nonce move two endpoints corroborated, its transaction not listed (yet). */
  signature?: string;
  slot: number;
  nonceMove?: NonceMove;
}

/**
 * Transactions the authority's key signed that this process did not: target chain first, each
 * chain newest first. The chain client reports each once, and only with proof: found in the
 * key's history, verified and new, or a nonce move two endpoints corroborate (docs/chain-client.md
 * "Who signs: proof, not reports"); anything less is a doubt
 * (bridge_signer_evidence_unverified_total), never reported here. So no halt and no stand-down
 * rests on one node's word.
 */
export function foreignTransactions(authority: AuthorityView, seenAtMs: number): ForeignTransaction[] {
  return (['target', 'source'] as const).flatMap((chain) => {
    const fromHistory = authority[chain].transactions
      .filter((transaction) => !transaction.signedHere)
      .map(
        ({ signature, slot, nonceMove }): ForeignTransaction => ({
          chain,
          signature,
          slot,
          ...(nonceMove === undefined ? {} : { nonceMove }),
          seenAtMs,
        }),
      );
    const corroborated = (authority[chain].nonceMoves ?? []).map(
      (nonceMove): ForeignTransaction => ({ chain, slot: nonceMove.slot, nonceMove, seenAtMs }),
    );
    return [...fromHistory, ...corroborated].sort((a, b) => b.slot - a.slot);
  });
}

/** How a use of the key is named in a line an operator reads: its transaction, and the nonce it moved. */
export function keyUseText(use: KeyUse): string {
  const move = use.nonceMove;
  const moved = move === undefined ? '' : `moved nonce account ${move.account} from ${move.from} to ${move.to}`;
  if (use.signature === undefined) return `a transaction that ${moved} (two endpoints hold both values)`;
  return `transaction ${use.signature}${moved === '' ? '' : ` (it ${moved})`}`;
}

/** BRIDGE_ON_FOREIGN_SIGNER=halt: once another signer showed, nothing more is submitted until restart. */
export function isHalted(policy: ForeignSignerPolicy, foreignSigner: ForeignTransaction | null): boolean {
  return policy === 'halt' && foreignSigner !== null;
}

/** How long the other signer a standby watches has been seen signing: from its first to its latest sighting; 0 when none. */
export function otherSignerActiveMs(facts: RoleFacts): number {
  const other = facts.otherSigner;
  return facts.role === 'standby' && other !== null ? other.lastSeenAtMs - other.activeSinceMs : 0;
}

/**
 * A twin that stays: this instance stands by while another one has kept signing for longer than
 * BRIDGE_HANDOFF_SECS (a rollout ends sooner). Measured between this process's own reads that
 * saw it, so it says exactly what the ledger showed. Null while that is not so.
 */
export function twinProblem(facts: RoleFacts, handoffMs: number): string | null {
  const activeMs = otherSignerActiveMs(facts);
  const other = facts.otherSigner;
  if (other === null || handoffMs === 0 || activeMs <= handoffMs) return null;
  return (
    `another instance has been signing with this authority's key for ${Math.round(activeMs / 1000)} s, longer than ` +
    `BRIDGE_HANDOFF_SECS (${Math.round(handoffMs / 1000)} s); ` +
    `${other.signature !== undefined ? `its latest transaction is ${other.signature}` : `its latest is ${keyUseText(other)}`} on the ` +
    `${chainName(other.chain)} chain (slot ${other.slot}); this server stands by. A rollout would have ended by now: ` +
    'find and stop the other instance (SPEC §8), or raise BRIDGE_HANDOFF_SECS if the pair is an intended hot standby'
  );
}
