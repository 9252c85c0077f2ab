import type { Bank } from '../bank/bank.js';
import type { FeeHistoryMode } from '../bank/prioritization-fees.js';
import { forgeHistory, type ForgedHistory } from './forged-history.js';
import { PastStates, type PastState } from './past-states.js';
import { ReceivedLog } from './forwarding.js';
import { parseFaultSettings, type FaultKind, type FaultSettings, type MethodFaults } from './settings.js';

/**
 * Fault injection for one node. Counters are consumed call by call; error rates draw from a
 * seeded PRNG so a run is reproducible. A call takes at most one fault, in this order:
 * http500 count, http429 count, rpcErrors count, errorRate. Latency applies to every call.
 * `pauseBlocks` is the bank's pause: `node.pause()` and `faults.set({ pauseBlocks: true })` are one switch.
 * `priceFloor`, `freezeFeeHistory` and `feeHistory` are the chain's too (congestion is the cluster's, not one endpoint's),
 * and so are `abandonSlots` and `forkShare` (a fork is the cluster's; bank/minority-forks.ts).
 */

export interface FaultDecision {
  latencyMs: number;
  fault: FaultKind | undefined;
  retryAfterSecs: number;
}

export interface FaultSnapshot {
  seed: number;
  methods: Record<string, MethodFaults>;
  loseResponses: number;
  loseResponseMode: LostResponse;
  dropTransactions: number;
  forwardShare: number;
  /** Sends this endpoint forwarded to the leader, and those it accepted and dropped, since the start. */
  forwarded: number;
  dropped: number;
  requireTip: { account: string; lamports: number } | null;
  landAfterSlots: number;
  /** Transactions sent with an in-flight delay (through any endpoint of the chain) that have not landed or been dropped yet. */
  inFlight: number;
  blockhashLagSlots: number;
  simulateUnitsConsumed: number | null;
  /** The address this endpoint's history forges transactions for, how many and in which slot, or null. */
  forgedHistory: { address: string; transactions: number; slot: number } | null;
  pauseBlocks: boolean;
  slotLag: number;
  /** The slot this endpoint's reports stopped at, or null. */
  frozenAtSlot: number | null;
  priceFloor: number;
  freezeFeeHistory: boolean;
  feeHistory: FeeHistoryMode;
  /** Transactions accepted below the price floor that have neither landed nor expired yet (approximate: expired ones are dropped once per 150 slots). */
  waitingBelowFloor: number;
  noHistory: boolean;
  alternateBehindSlots: number;
  httpStatus: 401 | 403 | 404 | null;
  /** The chain's minority forks: slots still to fork, the share, and forks and transactions abandoned since the start. */
  abandonSlots: number;
  forkShare: number;
  abandonedForks: number;
  abandonedTransactions: number;
}

/** How far behind the chain one call's answer is, and whether transactions of the newer slots are hidden too. */
export interface CallView {
  behindSlots: number;
  /** The answering node has not seen the newer slots at all (a lagging backend), not just reports older numbers. */
  pastOnly: boolean;
  /** A lagging backend's state: the copy kept at or before a slot (else the oldest kept). */
  pastAt?: (slot: number) => PastState | undefined;
}

export type LostResponse = NonNullable<FaultSettings['loseResponseMode']>;

const DEFAULT_SEED = 1;
const DEFAULT_RETRY_AFTER_SECS = 1;

export class Faults {
  readonly #bank: Bank;
  readonly #knownMethods: ReadonlySet<string>;
  #seed = DEFAULT_SEED;
  #random = mulberry32(DEFAULT_SEED);
  #methods: Record<string, MethodFaults> = {};
  #loseResponses = 0;
  #loseResponseMode: LostResponse = 'http500';
  #dropTransactions = 0;
  #forwardShare = 1;
  #forwarded = 0;
  #dropped = 0;
  #requireTip: { account: string; lamports: number } | null = null;
  #landAfterSlots = 0;
  #blockhashLagSlots = 0;
  #simulateUnitsConsumed: number | null = null;
  #forged: ForgedHistory | null = null;
  #slotLag = 0;
  #frozenAtSlot: number | null = null;
  #noHistory = false;
  #alternateBehindSlots = 0;
  #httpStatus: 401 | 403 | 404 | null = null;
  readonly #past = new PastStates();

  /** Shared by every endpoint of the chain: which signature was first received in which slot. */
  readonly received: ReceivedLog;

  constructor(bank: Bank, knownMethods: ReadonlySet<string>, received: ReceivedLog = new ReceivedLog()) {
    this.#bank = bank;
    this.#knownMethods = knownMethods;
    this.received = received;
  }

  /** Merges `settings` into the current ones: each given key (and each given method) replaces what was there. */
  set(settings: FaultSettings): FaultSnapshot {
    const valid = parseFaultSettings(settings, this.#knownMethods);
    if (valid.seed !== undefined) {
      this.#seed = valid.seed;
      this.#random = mulberry32(valid.seed);
    }
    if (valid.methods !== undefined) this.#methods = { ...this.#methods, ...valid.methods };
    if (valid.loseResponses !== undefined) this.#loseResponses = valid.loseResponses;
    if (valid.loseResponseMode !== undefined) this.#loseResponseMode = valid.loseResponseMode;
    if (valid.dropTransactions !== undefined) this.#dropTransactions = valid.dropTransactions;
    if (valid.forwardShare !== undefined) this.#forwardShare = valid.forwardShare;
    if (valid.requireTip !== undefined) this.#requireTip = valid.requireTip;
    if (valid.landAfterSlots !== undefined) this.#landAfterSlots = valid.landAfterSlots;
    if (valid.blockhashLagSlots !== undefined) this.#blockhashLagSlots = valid.blockhashLagSlots;
    if (valid.simulateUnitsConsumed !== undefined) this.#simulateUnitsConsumed = valid.simulateUnitsConsumed;
    if (valid.forgedHistory === null) this.#forged = null;
    if (valid.forgedHistory !== undefined && valid.forgedHistory !== null) {
      const { address, transactions } = valid.forgedHistory;
      this.#forged = forgeHistory(address, transactions, this.#bank.slot, this.#bank.latestBlockhash().blockhash);
    }
    if (valid.slotLag !== undefined) this.#slotLag = valid.slotLag;
    if (valid.freezeSlot === true) this.#frozenAtSlot ??= this.reportedSlot();
    if (valid.freezeSlot === false) this.#frozenAtSlot = null;
    if (valid.noHistory !== undefined) this.#noHistory = valid.noHistory;
    if (valid.alternateBehindSlots !== undefined) this.#alternateBehindSlots = valid.alternateBehindSlots;
    if (this.#alternateBehindSlots === 0) this.#past.clear();
    if (valid.httpStatus !== undefined) this.#httpStatus = valid.httpStatus;
    if (valid.pauseBlocks === true) this.#bank.pause();
    if (valid.pauseBlocks === false) this.#bank.resume();
    if (valid.freezeFeeHistory !== undefined) this.#bank.freezeFeeHistory(valid.freezeFeeHistory);
    if (valid.feeHistory !== undefined) this.#bank.setFeeHistoryMode(valid.feeHistory);
    if (valid.priceFloor !== undefined) this.#bank.setPriceFloor(BigInt(valid.priceFloor));
    if (valid.abandonSlots !== undefined || valid.forkShare !== undefined) {
      this.#bank.setForks({ abandonSlots: valid.abandonSlots, forkShare: valid.forkShare }, () => this.#random());
    }
    return this.snapshot();
  }

  /** Removes every fault, resumes block production and lifts congestion. */
  clear(): FaultSnapshot {
    this.#seed = DEFAULT_SEED;
    this.#random = mulberry32(DEFAULT_SEED);
    this.#methods = {};
    this.#loseResponses = 0;
    this.#loseResponseMode = 'http500';
    this.#dropTransactions = 0;
    this.#forwardShare = 1;
    this.#requireTip = null;
    this.#landAfterSlots = 0;
    this.#blockhashLagSlots = 0;
    this.#simulateUnitsConsumed = null;
    this.#forged = null;
    this.#slotLag = 0;
    this.#frozenAtSlot = null;
    this.#noHistory = false;
    this.#alternateBehindSlots = 0;
    this.#past.clear();
    this.#httpStatus = null;
    this.#bank.resume();
    this.#bank.freezeFeeHistory(false);
    this.#bank.setFeeHistoryMode('floor');
    this.#bank.setPriceFloor(0n);
    this.#bank.clearForks();
    return this.snapshot();
  }

  /** The slot this endpoint reports: the chain's, less `slotLag`, no later than a frozen one. */
  reportedSlot(): number {
    const lagging = Math.max(0, this.#bank.slot - this.#slotLag);
    return this.#frozenAtSlot === null ? lagging : Math.min(lagging, this.#frozenAtSlot);
  }

  /** This endpoint keeps no transaction history. */
  get noHistory(): boolean {
    return this.#noHistory;
  }

  /** The HTTP status every call answers, or null. */
  get httpStatus(): 401 | 403 | 404 | null {
    return this.#httpStatus;
  }

  /**
   * The view one call is answered from; with `alternateBehindSlots`, the lagging backend's for
   * half the calls, drawn from the seeded PRNG (a balancer's choice follows no call pattern): the
   * chain as it was that many slots ago (./past-states.ts), its accounts and its slot, or as far
   * back as the copies kept since the fault was set reach.
   */
  nextCallView(): CallView {
    const lagging = this.#bank.slot - this.reportedSlot();
    if (this.#alternateBehindSlots === 0) return { behindSlots: lagging, pastOnly: false };
    // The open slot's block may still take a transaction (whose status then names that slot):
    // a copy made now is the state of the last completed slot, and is kept under that slot.
    this.#past.record(this.#bank.slot - 1, () => this.#bank.copyOfAccounts());
    if (this.#random() >= 0.5) return { behindSlots: lagging, pastOnly: false };
    return { behindSlots: Math.max(lagging, this.#alternateBehindSlots), pastOnly: true, pastAt: (slot) => this.#past.at(slot) };
  }

  snapshot(): FaultSnapshot {
    return {
      seed: this.#seed,
      methods: structuredClone(this.#methods),
      loseResponses: this.#loseResponses,
      loseResponseMode: this.#loseResponseMode,
      dropTransactions: this.#dropTransactions,
      forwardShare: this.#forwardShare,
      forwarded: this.#forwarded,
      dropped: this.#dropped,
      requireTip: this.#requireTip === null ? null : { ...this.#requireTip },
      landAfterSlots: this.#landAfterSlots,
      inFlight: this.#bank.inFlight,
      blockhashLagSlots: this.#blockhashLagSlots,
      simulateUnitsConsumed: this.#simulateUnitsConsumed,
      forgedHistory:
        this.#forged === null
          ? null
          : { address: this.#forged.address, transactions: this.#forged.entries.length, slot: this.#forged.entries[0]!.slot },
      pauseBlocks: this.#bank.paused,
      slotLag: this.#slotLag,
      frozenAtSlot: this.#frozenAtSlot,
      priceFloor: Number(this.#bank.priceFloor),
      freezeFeeHistory: this.#bank.feeHistoryFrozen,
      feeHistory: this.#bank.feeHistoryMode,
      waitingBelowFloor: this.#bank.waitingBelowFloor,
      noHistory: this.#noHistory,
      alternateBehindSlots: this.#alternateBehindSlots,
      httpStatus: this.#httpStatus,
      ...this.#bank.forks,
    };
  }

  /** Decides (and consumes) the fault of one call of `method`. */
  decide(method: string): FaultDecision {
    const faults = this.#methods[method] ?? this.#methods['*'];
    if (faults === undefined) return { latencyMs: 0, fault: undefined, retryAfterSecs: DEFAULT_RETRY_AFTER_SECS };
    return {
      latencyMs: faults.latencyMs ?? 0,
      fault: this.#takeFault(faults),
      retryAfterSecs: faults.retryAfterSecs ?? DEFAULT_RETRY_AFTER_SECS,
    };
  }

  /** sendTransaction: how many slots a transaction this endpoint takes is in flight before it lands. */
  get landAfterSlots(): number {
    return this.#landAfterSlots;
  }

  /** How many of the newest blocks' blockhashes this endpoint has not seen. */
  get blockhashLagSlots(): number {
    return this.#blockhashLagSlots;
  }

  /** The units simulateTransaction claims, or null for the truth. */
  get simulateUnitsConsumed(): number | null {
    return this.#simulateUnitsConsumed;
  }

  /** The transactions this endpoint's history forges (forgedHistory), or null. */
  get forgedHistory(): ForgedHistory | null {
    return this.#forged;
  }

  /** sendTransaction: how to lose this response, or undefined to answer normally. */
  takeLostResponse(): LostResponse | undefined {
    if (this.#loseResponses === 0) return undefined;
    this.#loseResponses -= 1;
    return this.#loseResponseMode;
  }

  /** sendTransaction: true when this transaction is to be accepted and never landed (`dropTransactions`, or not forwarded under `forwardShare`). */
  takeDroppedTransaction(): boolean {
    if (this.#dropTransactions > 0) {
      this.#dropTransactions -= 1;
      return true;
    }
    const forward = this.#forwardShare >= 1 || this.#random() < this.#forwardShare;
    if (forward) this.#forwarded += 1;
    else this.#dropped += 1;
    return !forward;
  }

  /** sendTransaction: the tip this endpoint requires, or null. */
  get requireTip(): { account: string; lamports: number } | null {
    return this.#requireTip;
  }

  #takeFault(faults: MethodFaults): FaultKind | undefined {
    for (const kind of ['http500', 'http429', 'rpcErrors'] as const) {
      const remaining = faults[kind] ?? 0;
      if (remaining > 0) {
        faults[kind] = remaining - 1;
        return kind === 'rpcErrors' ? 'rpc' : kind;
      }
    }
    const rate = faults.errorRate ?? 0;
    if (rate > 0 && this.#random() < rate) return faults.errorKind ?? 'rpc';
    return undefined;
  }
}

/** A small seeded PRNG (mulberry32): uniform in [0, 1), the same sequence for the same seed. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
