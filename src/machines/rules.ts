import { isRelayableWithdrawResult, type CyclePlan } from './planning/cycle-plan.js';
import { MAX_TIMER_DELAY_MS } from '../time.js';
import type { AuthorityView, ChainAmounts, NonceMove } from '../chain/bridge-chains.js';
import type { ChainSide } from '../domain.js';
import type { ForeignSignerPolicy } from '../config/config.js';
import type { CrankRole, CrankRoleView, CrankStep } from './crank-types.js';
import { chainName } from '../chain/chain-name.js';

/**
 * The crank's rules, as pure functions of its context: everything the machine's guards and
 * delays (crank-machine.ts) decide by, in four parts. Whether a step has work (rule 3.1 itself
 * lives with the planner that applies it first, planning/cycle-plan.ts; the guard checks it
 * again). When the next cycle starts. What the authority's own accounts allow: fees, a second
 * signer. Which instance of a signer submits (the role). The attempt limit and what is retried
 * are the failure policy's (src/failure-policy.ts).
 */

// Work: one predicate per action step.

/** Crank cycle step 1: the source has deposits this authority has not voted on yet. */
export function hasAckDepositWork(plan: CyclePlan | null): boolean {
  return plan !== null && plan.ackDeposit.votes.length > 0;
}

/**
 * Crank cycle step 3: finalized destination results wait for this authority's vote. Every
 * planned vote is checked against rule 3.1 again, so that no vote for an unready result can
 * leave even if planning went wrong.
 */
export function hasAckWithdrawWork(plan: CyclePlan | null): boolean {
  if (plan === null || plan.ackWithdraw.votes.length === 0) return false;
  return plan.ackWithdraw.votes.every((planned) => isRelayableWithdrawResult(planned.destination));
}

/** Crank cycle step 5: finalized deposit entries not cleaned up yet. */
export function hasCleanupWork(plan: CyclePlan | null): boolean {
  return plan !== null && plan.cleanup.indices.length > 0;
}

// The poll schedule.

/**
 * When the next cycle starts (the machine's `idle` state arms one timer at a time).
 * Cycles run every BRIDGE_POLL_INTERVAL_SECS from the end of the previous one. The interval
 * may be longer than one Node timer holds (2^31-1 ms, about 24.8 days): idle then waits in
 * chunks of at most that length, counting what it has waited, and re-arms until the whole
 * interval has passed. A cycle that left a backlog is followed at once (delay 0, a fresh
 * macrotask, so HTTP requests and timers run in between).
 */

export interface PollSchedule {
  pollIntervalMs: number;
  /** Time idle has already waited since the last cycle ended, in whole chunks. */
  idleWaitedMs: number;
  /** The last cycle left work beyond one batch and the back-to-back bound allows another. */
  drainBacklog: boolean;
}

/** The delay for the next idle timer. */
export function nextCycleDelay(schedule: PollSchedule): number {
  if (schedule.drainBacklog) return 0;
  return Math.min(remainingWait(schedule), MAX_TIMER_DELAY_MS);
}

/** When the idle timer fires: does it end the wait (true) or was it one chunk of a longer one? */
export function isCycleDue(schedule: PollSchedule): boolean {
  return schedule.drainBacklog || remainingWait(schedule) <= MAX_TIMER_DELAY_MS;
}

/** The wait after one more chunk that did not end it. */
export function idleWaitAfterChunk(schedule: PollSchedule): number {
  return schedule.idleWaitedMs + MAX_TIMER_DELAY_MS;
}

function remainingWait(schedule: PollSchedule): number {
  return Math.max(0, schedule.pollIntervalMs - schedule.idleWaitedMs);
}

// The authority's own accounts: can it pay this cycle's fees on a chain, did someone else sign
// with its key, may the crank still submit.

/** Where each step's transactions land, and so who pays their fees. */
const STEP_CHAINS: Readonly<Record<CrankStep, ChainSide>> = {
  ack_deposit: 'target',
  ack_withdraw: 'source',
  cleanup: 'source',
};

export const CHAINS: readonly ChainSide[] = ['source', 'target'];

/** The balance and the need on each chain, from one read. */
export function feeFacts(authority: AuthorityView, need: ChainAmounts): ChainFees {
  return {
    source: { balance: authority.source.balance, need: need.source },
    target: { balance: authority.target.balance, need: need.target },
  };
}

/** The chains on which the authority cannot pay what the plan would send. */
export function chainsShortOfFees(fees: ChainFees | null): ChainSide[] {
  return fees === null ? [] : CHAINS.filter((chain) => fees[chain].balance < fees[chain].need);
}

/** The chains on which the balance is below the early-warning level (a level of 0 warns never). */
export function chainsBelowMinimum(fees: ChainFees | null, minBalanceLamports: number): ChainSide[] {
  return fees === null ? [] : CHAINS.filter((chain) => fees[chain].balance < minBalanceLamports);
}

/**
 * Transactions the authority's key signed that this process did not: target chain first,
 * each chain newest first. The chain client reports each once: a nonce of the pool that moved
 * without this process ("Who signs, from the nonces"), and a transaction in the key's history
 * that landed after this process's first read ("Authority history"). One transaction can show
 * in both.
 */
export function foreignTransactions(authority: AuthorityView, seenAtMs: number): ForeignTransaction[] {
  return (['target', 'source'] as const).flatMap((chain) => {
    const fromHistory = authority[chain].transactions
      .filter((transaction) => !transaction.signedHere)
      .map(({ signature, slot }): ForeignTransaction => ({ chain, signature, slot, seenAtMs }));
    const fromNonces = (authority[chain].nonceMoves ?? []).map((nonceMove): ForeignTransaction => ({ chain, slot: nonceMove.slot, nonceMove, seenAtMs }));
    return [...fromHistory, ...fromNonces].sort((a, b) => b.slot - a.slot);
  });
}

/** How a use of the key is named in a line an operator reads: its transaction, or the nonce it moved. */
export function keyUseText(use: KeyUse): string {
  if (use.signature !== undefined) return `transaction ${use.signature}`;
  const move = use.nonceMove;
  return `a transaction that moved nonce account ${move?.account} from ${move?.from} to ${move?.to}`;
}

/** BRIDGE_ON_FOREIGN_SIGNER=halt: once another signer showed, nothing more is submitted until restart. */
export function isHalted(policy: ForeignSignerPolicy, foreignSigner: ForeignTransaction | null): boolean {
  return policy === 'halt' && foreignSigner !== null;
}

/** A step submits only while active, not halted, and while the authority can pay its chain's fees. */
export function maySubmit(
  step: CrankStep,
  facts: { fees: ChainFees | null; foreignSigner: ForeignTransaction | null; role: RoleFacts },
  policy: ForeignSignerPolicy,
): boolean {
  return !isStandby(facts.role) && !isHalted(policy, facts.foreignSigner) && !chainsShortOfFees(facts.fees).includes(STEP_CHAINS[step]);
}

/*
 * The role: which instance of a signer submits (docs/crank.md, "Role"). The chain is the only
 * shared state: an instance learns that another one signs with its key only from the key's
 * landed transactions, which each cycle's read reports (those this process did not sign). A standby reads, plans and reports but submits nothing; it takes over
 * once no such transaction has landed for the quiet window.
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
  return { role: settings.handoffMs === 0 ? 'active' : 'standby', sinceMs: null, quietSinceMs: null, extraQuietMs: 0, otherSigner: null };
}

export type RoleChange =
  | { kind: 'standing_by'; other: KeyUse }
  | { kind: 'taking_over'; quietMs: number };

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
  const facts: RoleFacts = { ...current, sinceMs: current.sinceMs ?? atMs, quietSinceMs: current.quietSinceMs ?? atMs };
  if (settings.handoffMs === 0) return { facts, foreign: [...seen], change: null };
  const windowMs = quietWindowMs(settings.pollIntervalMs);
  const latest = seen[0];
  if (latest !== undefined) {
    const wasStandby = facts.role === 'standby';
    const standby: RoleFacts = {
      role: 'standby',
      sinceMs: wasStandby ? facts.sinceMs : atMs,
      quietSinceMs: atMs,
      extraQuietMs: wasStandby ? facts.extraQuietMs : Math.floor(random() * windowMs),
      otherSigner: watch(wasStandby ? facts.otherSigner : null, latest, atMs),
    };
    if (wasStandby) return { facts: standby, foreign: [], change: null };
    return { facts: standby, foreign: [...seen], change: { kind: 'standing_by', other: latest } };
  }
  const quietMs = atMs - facts.quietSinceMs!;
  if (facts.role === 'standby' && atMs >= mayTakeOverAtMs(facts, settings, atMs)) {
    const active: RoleFacts = { role: 'active', sinceMs: atMs, quietSinceMs: facts.quietSinceMs, extraQuietMs: 0, otherSigner: null };
    return { facts: active, foreign: [], change: { kind: 'taking_over', quietMs } };
  }
  return { facts, foreign: [], change: null };
}

/**
 * A read whose history left entries unchecked (its bounds, under traffic that lists the key) is
 * not a quiet one: whether the other instance signed in them is unknown, so a standby's quiet
 * window starts again from it. An active instance goes on: unknown is not a second signer.
 */
export function afterUnknownHistory(facts: RoleFacts, authority: AuthorityView, atMs: number): RoleFacts {
  const unknown = CHAINS.some((chain) => authority[chain].historyIncomplete === true);
  return unknown && facts.role === 'standby' ? { ...facts, quietSinceMs: atMs } : facts;
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

/** A standby submits nothing. */
function isStandby(facts: RoleFacts): boolean {
  return facts.role === 'standby';
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

interface FeeFacts {
  balance: number;
  need: number;
}

export type ChainFees = Record<ChainSide, FeeFacts>;

export interface ForeignTransaction extends KeyUse {
  seenAtMs: number;
}

/** The other instance a standby watches: its latest transaction and since when it has been seen signing. */
export interface OtherSigner extends KeyUse {
  /** The read that first saw it signing in this standby stretch. */
  activeSinceMs: number;
  /** The latest read that saw a new transaction of it. */
  lastSeenAtMs: number;
}

export interface RoleFacts {
  role: CrankRole;
  /** When this role began; null before the first read. */
  sinceMs: number | null;
  /** The latest read that saw another signer, or the first read: the quiet window runs from here. */
  quietSinceMs: number | null;
  /**
   * Added to the quiet window after this instance stood by on seeing another signer while it was
   * active: uniform in [0, window), so that two instances that stood by on each other's
   * transactions do not take over in the same instant again. 0 otherwise.
   */
  extraQuietMs: number;
  otherSigner: OtherSigner | null;
}

/**
 * A transaction signed with the key but not by this process, as a read reports it: the
 * destination chain's first, each chain's newest first (slots of two chains do not compare).
 * Seen in the history (its signature) or as a nonce of the pool that moved (the nonce; the
 * transaction itself is not known).
 */
export interface KeyUse {
  chain: ChainSide;
  signature?: string;
  slot: number;
  nonceMove?: NonceMove;
}

/** The role beside the crank's answers: a standby says from when it may sign. */
export function crankRoleView(facts: RoleFacts, settings: RoleSettings, nowMs: number): CrankRoleView {
  if (facts.role === 'active') return { role: 'active' };
  // Rounded up: a "not before" must not name a second at which the standby still waits.
  return { role: 'standby', may_sign_at: Math.ceil(mayTakeOverAtMs(facts, settings, nowMs) / 1000) };
}
