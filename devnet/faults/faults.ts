import type { Bank } from '../bank/bank.js';
import { parseFaultSettings, type FaultKind, type FaultSettings, type MethodFaults } from './settings.js';

/**
 * Fault injection for one node. Counters are consumed call by call; error rates draw from a
 * seeded PRNG so a run is reproducible. A call takes at most one fault, in this order:
 * http500 count, http429 count, rpcErrors count, errorRate. Latency applies to every call.
 * `pauseBlocks` is the bank's pause: `node.pause()` and `faults.set({ pauseBlocks: true })` are one switch.
 * `priceFloor` and `freezeFeeHistory` are the chain's too (congestion is the cluster's, not one endpoint's).
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
  loseResponseMode: 'http500' | 'destroy';
  dropTransactions: number;
  pauseBlocks: boolean;
  slotLag: number;
  /** The slot this endpoint's reports stopped at, or null. */
  frozenAtSlot: number | null;
  priceFloor: number;
  freezeFeeHistory: boolean;
  /** Transactions accepted below the price floor that have neither landed nor expired yet (approximate: expired ones are dropped once per 150 slots). */
  waitingBelowFloor: number;
}

const DEFAULT_SEED = 1;
const DEFAULT_RETRY_AFTER_SECS = 1;

export class Faults {
  readonly #bank: Bank;
  readonly #knownMethods: ReadonlySet<string>;
  #seed = DEFAULT_SEED;
  #random = mulberry32(DEFAULT_SEED);
  #methods: Record<string, MethodFaults> = {};
  #loseResponses = 0;
  #loseResponseMode: 'http500' | 'destroy' = 'http500';
  #dropTransactions = 0;
  #slotLag = 0;
  #frozenAtSlot: number | null = null;

  constructor(bank: Bank, knownMethods: ReadonlySet<string>) {
    this.#bank = bank;
    this.#knownMethods = knownMethods;
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
    if (valid.slotLag !== undefined) this.#slotLag = valid.slotLag;
    if (valid.freezeSlot === true) this.#frozenAtSlot ??= this.reportedSlot();
    if (valid.freezeSlot === false) this.#frozenAtSlot = null;
    if (valid.pauseBlocks === true) this.#bank.pause();
    if (valid.pauseBlocks === false) this.#bank.resume();
    if (valid.freezeFeeHistory !== undefined) this.#bank.freezeFeeHistory(valid.freezeFeeHistory);
    if (valid.priceFloor !== undefined) this.#bank.setPriceFloor(BigInt(valid.priceFloor));
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
    this.#slotLag = 0;
    this.#frozenAtSlot = null;
    this.#bank.resume();
    this.#bank.freezeFeeHistory(false);
    this.#bank.setPriceFloor(0n);
    return this.snapshot();
  }

  /** The slot this endpoint reports: the chain's, less `slotLag`, no later than a frozen one. */
  reportedSlot(): number {
    const lagging = Math.max(0, this.#bank.slot - this.#slotLag);
    return this.#frozenAtSlot === null ? lagging : Math.min(lagging, this.#frozenAtSlot);
  }

  snapshot(): FaultSnapshot {
    return {
      seed: this.#seed,
      methods: structuredClone(this.#methods),
      loseResponses: this.#loseResponses,
      loseResponseMode: this.#loseResponseMode,
      dropTransactions: this.#dropTransactions,
      pauseBlocks: this.#bank.paused,
      slotLag: this.#slotLag,
      frozenAtSlot: this.#frozenAtSlot,
      priceFloor: Number(this.#bank.priceFloor),
      freezeFeeHistory: this.#bank.feeHistoryFrozen,
      waitingBelowFloor: this.#bank.waitingBelowFloor,
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

  /** sendTransaction: how to lose this response, or undefined to answer normally. */
  takeLostResponse(): 'http500' | 'destroy' | undefined {
    if (this.#loseResponses === 0) return undefined;
    this.#loseResponses -= 1;
    return this.#loseResponseMode;
  }

  /** sendTransaction: true when this transaction is to be accepted and never landed. */
  takeDroppedTransaction(): boolean {
    if (this.#dropTransactions === 0) return false;
    this.#dropTransactions -= 1;
    return true;
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
