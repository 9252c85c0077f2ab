import type { AccountMeta, PublicKey, TransactionInstruction } from '@solana/web3.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { ChainRpc, SlotPrioritizationFee } from '../rpc/chain-rpc.js';

/**
 * The priority fee a crank transaction bids (SetComputeUnitPrice, micro-lamports per CU;
 * docs/chain-client.md "Compute budget and priority fees").
 *
 * The market price is the FEE_PERCENTILE-th percentile of what getRecentPrioritizationFees
 * reports for the accounts the transaction writes (the lowest price that landed in each of the
 * last 150 slots). That history lags a sudden surge, so each transaction on the chain that
 * expired without landing raises the escalation step k by one (up to ESCALATION_STEPS): the bid
 * is at least the market price x ESCALATION_FACTOR^k and at least
 * cap / ESCALATION_FACTOR^(ESCALATION_STEPS - k), which reaches the cap within ESCALATION_STEPS
 * expiries even from a market price of 0. Congestion is the chain's, not one action's, so the
 * step is the chain's: every action there bids it. It steps down by one after ESCALATION_HOLD
 * landings in a row, so a price the history still lags is kept while it is needed and one that
 * is no longer needed is let go. The bid is never below BRIDGE_PRIORITY_FEE_MIN_MICROLAMPORTS
 * and never above BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS: above the cap the crank does not
 * overpay, its transactions expire and the failure names the price (`feeNote`).
 *
 * The step is the one piece of memory here: what this process saw of its own transactions. A
 * restart starts from the market price again, which costs at most ESCALATION_STEPS more expiries.
 */

/** Percentile of the recent slots' prices bid: above most slots' clearing price, below the spikes. */
const FEE_PERCENTILE = 75;

/** Each escalation step multiplies the bid by this much. */
const ESCALATION_FACTOR = 2;

/** Expiries after which the bid is the cap, whatever the history says. */
const ESCALATION_STEPS = 3;

/** Landings in a row after which the escalation steps down by one. */
const ESCALATION_HOLD = 8;

/** getRecentPrioritizationFees takes at most 128 addresses. */
const MAX_FEE_ACCOUNTS = 128;

export interface PriorityFeeBounds {
  /** BRIDGE_PRIORITY_FEE_MIN_MICROLAMPORTS. */
  minMicroLamports: number;
  /** BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS: the cap. */
  maxMicroLamports: number;
}

export interface Bid {
  /** The price offered, micro-lamports per CU. */
  microLamportsPerUnit: number;
  /** The FEE_PERCENTILE-th percentile of the recent slots. */
  marketMicroLamports: number;
  /** The highest price a recent slot cleared. */
  recentMaxMicroLamports: number;
  /** The bid wanted more than the cap allows. */
  capped: boolean;
  /** The escalation step (0..ESCALATION_STEPS) this bid was made at. */
  step: number;
  cap: number;
}

/** The bid from a fee history at escalation step `step`, within `bounds`. */
export function bidFrom(history: readonly SlotPrioritizationFee[], step: number, bounds: PriorityFeeBounds): Bid {
  const prices = history.map((slot) => slot.prioritizationFee).sort((a, b) => a - b);
  const market = percentile(prices, FEE_PERCENTILE);
  const cap = bounds.maxMicroLamports;
  const escalated = step === 0 ? market : Math.max(market * ESCALATION_FACTOR ** step, cap / ESCALATION_FACTOR ** Math.max(0, ESCALATION_STEPS - step));
  const wanted = Math.ceil(Math.max(bounds.minMicroLamports, escalated));
  return {
    microLamportsPerUnit: Math.min(wanted, cap),
    marketMicroLamports: market,
    recentMaxMicroLamports: prices.at(-1) ?? 0,
    capped: wanted > cap,
    step,
    cap,
  };
}

/** Nearest-rank percentile of ascending `sorted`; 0 for none. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * What a not-landed failure says about the price: the bid, what recent slots cleared, and the
 * cap, so that an operator sees whether to raise the cap or wait.
 */
export function feeNote(bid: Bid): string {
  const offered = `priority fee offered ${bid.microLamportsPerUnit} micro-lamports/CU`;
  const cleared = `recent slots cleared ${bid.marketMicroLamports} (p${FEE_PERCENTILE}) to ${bid.recentMaxMicroLamports} (max)`;
  const cap = `the cap (BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS) is ${bid.cap}`;
  const advice = bid.capped ? ': the going price is above the cap; raise the cap or wait for the congestion to pass' : '';
  const step = `escalation step ${bid.step} of ${ESCALATION_STEPS} (each expiry on this chain raises it)`;
  return `${offered} at ${step}; ${cleared}; ${cap}${advice}`;
}

/** The distinct accounts the instructions write, at most MAX_FEE_ACCOUNTS. */
function writableAccounts(instructions: readonly TransactionInstruction[]): PublicKey[] {
  const byKey = new Map<string, PublicKey>();
  const writable = instructions.flatMap((instruction) => instruction.keys.filter((meta: AccountMeta) => meta.isWritable));
  for (const { pubkey } of writable) byKey.set(pubkey.toBase58(), pubkey);
  return [...byKey.values()].slice(0, MAX_FEE_ACCOUNTS);
}

/** One chain's bids: reads the fee history, keeps the chain's escalation step. */
export class PriorityFeeBidder {
  #step = 0;
  #landedInARow = 0;

  constructor(
    private readonly rpc: ChainRpc,
    private readonly bounds: PriorityFeeBounds,
    private readonly metrics: Metrics,
  ) {
    this.metrics.priorityFeeCap.set({ chain: rpc.chain }, bounds.maxMicroLamports);
  }

  async bid(instructions: readonly TransactionInstruction[], signal: AbortSignal): Promise<Bid> {
    const history = await this.rpc.getRecentPrioritizationFees(writableAccounts(instructions), signal);
    const bid = bidFrom(history, this.#step, this.bounds);
    this.metrics.priorityFee.set({ chain: this.rpc.chain }, bid.microLamportsPerUnit);
    return bid;
  }

  expired(): void {
    this.#step = Math.min(ESCALATION_STEPS, this.#step + 1);
    this.#landedInARow = 0;
  }

  landed(): void {
    this.#landedInARow += 1;
    if (this.#landedInARow < ESCALATION_HOLD) return;
    this.#step = Math.max(0, this.#step - 1);
    this.#landedInARow = 0;
  }
}
