import type { AccountMeta, PublicKey, TransactionInstruction } from '@solana/web3.js';
import type { CrankAction } from '../../domain.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { ChainRpc, SlotPrioritizationFee } from '../rpc/chain-rpc.js';

/**
 * The priority fee a crank transaction bids (SetComputeUnitPrice, micro-lamports per CU;
 * docs/chain-client.md "Compute budget and priority fees").
 *
 * The market price is the FEE_PERCENTILE-th percentile of what getRecentPrioritizationFees
 * reports for the accounts the transaction writes (the lowest price that landed in each of the
 * last 150 slots). That history lags a sudden surge, so every transaction of an action that
 * expired without landing raises the next bid: after k expiries in a row the bid is at least
 * the market price x ESCALATION_FACTOR^k and at least cap / ESCALATION_FACTOR^(ESCALATION_STEPS - k),
 * which reaches the cap within ESCALATION_STEPS expiries even from a market price of 0. The
 * bid is never below BRIDGE_PRIORITY_FEE_MIN_MICROLAMPORTS and never above
 * BRIDGE_PRIORITY_FEE_MAX_MICROLAMPORTS: above the cap the crank does not overpay, its
 * transactions expire and the failure names the price (`feeNote`).
 *
 * The count of expiries is the one piece of memory here: it is what this process saw of its
 * own transactions, reset when one of the action's transactions lands. A restart starts from
 * the market price again, which costs at most ESCALATION_STEPS more expiries.
 */

/** Percentile of the recent slots' prices bid: above most slots' clearing price, below the spikes. */
const FEE_PERCENTILE = 75;

/** Each expiry in a row multiplies the bid by this much. */
const ESCALATION_FACTOR = 2;

/** Expiries in a row after which the bid is the cap, whatever the history says. */
const ESCALATION_STEPS = 3;

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
  /** This action's transactions that expired in a row before this bid. */
  expiries: number;
  cap: number;
}

/** The bid from a fee history after `expiries` expiries in a row, within `bounds`. */
export function bidFrom(history: readonly SlotPrioritizationFee[], expiries: number, bounds: PriorityFeeBounds): Bid {
  const prices = history.map((slot) => slot.prioritizationFee).sort((a, b) => a - b);
  const market = percentile(prices, FEE_PERCENTILE);
  const cap = bounds.maxMicroLamports;
  const escalated = expiries === 0 ? market : Math.max(market * ESCALATION_FACTOR ** expiries, cap / ESCALATION_FACTOR ** Math.max(0, ESCALATION_STEPS - expiries));
  const wanted = Math.ceil(Math.max(bounds.minMicroLamports, escalated));
  return {
    microLamportsPerUnit: Math.min(wanted, cap),
    marketMicroLamports: market,
    recentMaxMicroLamports: prices.at(-1) ?? 0,
    capped: wanted > cap,
    expiries,
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
  return `${offered} after ${bid.expiries} expir${bid.expiries === 1 ? 'y' : 'ies'} in a row; ${cleared}; ${cap}${advice}`;
}

/** The distinct accounts the instructions write, at most MAX_FEE_ACCOUNTS. */
function writableAccounts(instructions: readonly TransactionInstruction[]): PublicKey[] {
  const byKey = new Map<string, PublicKey>();
  const writable = instructions.flatMap((instruction) => instruction.keys.filter((meta: AccountMeta) => meta.isWritable));
  for (const { pubkey } of writable) byKey.set(pubkey.toBase58(), pubkey);
  return [...byKey.values()].slice(0, MAX_FEE_ACCOUNTS);
}

/** One chain's bids: reads the fee history, counts each action's expiries in a row. */
export class PriorityFeeBidder {
  readonly #expiries = new Map<CrankAction, number>();

  constructor(
    private readonly rpc: ChainRpc,
    private readonly bounds: PriorityFeeBounds,
    private readonly metrics: Metrics,
  ) {
    this.metrics.priorityFeeCap.set({ chain: rpc.chain }, bounds.maxMicroLamports);
  }

  async bid(action: CrankAction, instructions: readonly TransactionInstruction[], signal: AbortSignal): Promise<Bid> {
    const history = await this.rpc.getRecentPrioritizationFees(writableAccounts(instructions), signal);
    const bid = bidFrom(history, this.#expiries.get(action) ?? 0, this.bounds);
    this.metrics.priorityFee.set({ chain: this.rpc.chain }, bid.microLamportsPerUnit);
    return bid;
  }

  expired(action: CrankAction): void {
    this.#expiries.set(action, (this.#expiries.get(action) ?? 0) + 1);
  }

  landed(action: CrankAction): void {
    this.#expiries.delete(action);
  }
}
