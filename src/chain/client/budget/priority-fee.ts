import type { AccountMeta, PublicKey, TransactionInstruction } from '@solana/web3.js';
import type { Logger } from '../../../log/logger.js';
import type { Metrics } from '../../../metrics/metrics.js';
import type { ChainRpc } from '../../rpc/chain-rpc.js';
import type { SlotPrioritizationFee } from '../../rpc/rpc-answers.js';
import type { FeeEstimates } from '../../rpc/fee-estimate.js';
import { readLastLandedPrice } from './landed-price.js';

/**
 * Below this first-version landing rate over the window the chain is landing poorly: the bid
 * starts one escalation step higher (here) and alert BridgeLandingRateLow fires
 * (deploy/prometheus/alerts.yml). Drift's keepers alarm at the same 0.9 over ten minutes.
 */
const LANDING_RATE_THRESHOLD = 0.9;

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
 * The chain's landing rate moves the starting bid (docs/chain-client.md, "Landing measured"):
 * while fewer than LANDING_RATE_THRESHOLD of the last ten minutes' transactions landed on their
 * first version, every bid starts one step above the chain's step (never above the cap); while
 * every one of them did, the step comes down after half as many landings in a row.
 *
 * What the process learned is not lost at a restart: the first bid reads from the chain the
 * price the authority's newest landed transaction paid (./landed-price.ts) and bids at least
 * that (never above the cap), a carried price that halves at each step down (ESCALATION_HOLD
 * landings in a row), as a step does: a restart under a surge bids where it left off, and one
 * after it passed overpays at most ESCALATION_HOLD transactions before the price decays.
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

/**
 * The bid from a fee history at escalation step `step`, within `bounds`; `estimate`, a provider's
 * estimate, raises the market price at most to what the chain shows landed (`trusted`: the
 * highest price a recent slot cleared, or the carried price), never above it on its word alone.
 */
export function bidFrom(
  history: readonly SlotPrioritizationFee[],
  step: number,
  bounds: PriorityFeeBounds,
  estimate?: { price: number; trusted: number },
): Bid {
  const prices = history.map((slot) => slot.prioritizationFee).sort((a, b) => a - b);
  const fromHistory = percentile(prices, FEE_PERCENTILE);
  const recentMax = prices.at(-1) ?? 0;
  const market = estimate === undefined ? fromHistory : Math.max(fromHistory, Math.min(estimate.price, Math.max(recentMax, estimate.trusted)));
  const cap = bounds.maxMicroLamports;
  const escalated =
    step === 0 ? market : Math.max(market * ESCALATION_FACTOR ** step, cap / ESCALATION_FACTOR ** Math.max(0, ESCALATION_STEPS - step));
  const wanted = Math.ceil(Math.max(bounds.minMicroLamports, escalated));
  return {
    microLamportsPerUnit: Math.min(wanted, cap),
    marketMicroLamports: market,
    recentMaxMicroLamports: recentMax,
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

/** What the bidder reads of the chain's landing (../submit/send/landing-record.ts). */
interface LandingRate {
  /** The first-version landing rate of the last ten minutes; undefined with too few outcomes. */
  rate(): number | undefined;
}

export interface PriorityFeeBidderOptions {
  rpc: ChainRpc;
  bounds: PriorityFeeBounds;
  metrics: Metrics;
  landing: LandingRate;
  /** Whose landed transactions' price the first bid restores. */
  authority: PublicKey;
  logger: Logger;
  /** A provider's estimate beside the fee history (BRIDGE_*_FEE_ESTIMATE_URL); none when absent. */
  estimates?: FeeEstimates;
}

/** One chain's bids: reads the fee history, keeps the chain's escalation step. */
export class PriorityFeeBidder {
  #step = 0;
  #landedInARow = 0;
  /** The price restored from the chain at start, halved at each step down (0: none). */
  #carried = 0;
  #restored = false;
  private readonly rpc: ChainRpc;
  private readonly bounds: PriorityFeeBounds;

  constructor(private readonly options: PriorityFeeBidderOptions) {
    this.rpc = options.rpc;
    this.bounds = options.bounds;
    options.metrics.priorityFeeCap.set({ chain: options.rpc.chain }, options.bounds.maxMicroLamports);
  }

  async bid(instructions: readonly TransactionInstruction[], signal: AbortSignal): Promise<Bid> {
    if (!this.#restored) await this.restore(signal);
    const accounts = writableAccounts(instructions);
    const [history, estimate] = await Promise.all([
      this.rpc.getRecentPrioritizationFees(accounts, signal),
      this.options.estimates?.estimate(accounts, signal),
    ]);
    const rate = this.options.landing.rate();
    const step = Math.min(ESCALATION_STEPS, this.#step + (rate !== undefined && rate < LANDING_RATE_THRESHOLD ? 1 : 0));
    const estimated = estimate === undefined ? undefined : { price: estimate, trusted: this.#carried };
    const bid = withCarried(bidFrom(history, step, this.bounds, estimated), this.#carried);
    this.options.metrics.priorityFee.set({ chain: this.rpc.chain }, bid.microLamportsPerUnit);
    return bid;
  }

  /** Reads the price the authority's newest landed transaction paid: the carried price. Once per process. */
  private async restore(signal: AbortSignal): Promise<void> {
    const { authority, logger } = this.options;
    const price = await readLastLandedPrice(this.rpc, authority, logger, signal);
    this.#restored = true;
    if (price === undefined || price <= 0) return;
    this.#carried = Math.min(price, this.bounds.maxMicroLamports);
    logger.info({ chain: this.rpc.chain, price: this.#carried }, 'the bid starts at the price the last landed transaction of this authority paid');
  }

  expired(): void {
    this.#step = Math.min(ESCALATION_STEPS, this.#step + 1);
    this.#landedInARow = 0;
  }

  landed(): void {
    this.#landedInARow += 1;
    const hold = this.options.landing.rate() === 1 ? ESCALATION_HOLD / 2 : ESCALATION_HOLD;
    if (this.#landedInARow < hold) return;
    this.#step = Math.max(0, this.#step - 1);
    this.#carried = Math.floor(this.#carried / ESCALATION_FACTOR);
    this.#landedInARow = 0;
  }
}

/** `bid` raised to the carried price, within the cap. */
export function withCarried(bid: Bid, carried: number): Bid {
  if (carried <= bid.microLamportsPerUnit) return bid;
  return { ...bid, microLamportsPerUnit: Math.min(carried, bid.cap) };
}
