import { PublicKey } from '@solana/web3.js';
import { z } from 'zod';
import { MAX_COMPUTE_UNIT_LIMIT } from '../bank/compute-budget.js';
import { BLOCKHASH_VALIDITY_BLOCKS } from '../bank/history.js';
import { DevnetError } from '../devnet-error.js';

/**
 * Fault settings, for the typed API (`node.faults.set`) and the admin JSON-RPC method
 * `devnet_setFaults` alike. Unknown keys are errors, so a typo never silently injects nothing.
 */

const count = z.number().int().min(0);
const MAX_LAND_AFTER_SLOTS = 10_000;
const MAX_FORGED_TRANSACTIONS = 1_000;
const base58Address = z.string().refine(isPublicKey, 'must be a base58 public key (32 bytes)');

function isPublicKey(value: string): boolean {
  try {
    return new PublicKey(value).toBase58() === value;
  } catch {
    return false;
  }
}

const methodFaultsSchema = z.strictObject({
  /** Delay before the answer, in milliseconds. */
  latencyMs: z.number().int().min(0).max(60_000).optional(),
  /** Probability (0..1) that a call fails with `errorKind`, drawn from the seeded PRNG. */
  errorRate: z.number().min(0).max(1).optional(),
  errorKind: z.enum(['http500', 'http429', 'rpc']).optional(),
  /** The next N calls answer HTTP 500. */
  http500: count.optional(),
  /** The next N calls answer HTTP 429 with Retry-After: `retryAfterSecs`. */
  http429: count.optional(),
  retryAfterSecs: z.number().int().min(0).max(3_600).optional(),
  /** The next N calls answer the JSON-RPC error -32005 (node unhealthy). */
  rpcErrors: count.optional(),
});

const faultSettingsSchema = z.strictObject({
  /** Seed of the PRNG behind every `errorRate`; setting it restarts the sequence. */
  seed: z.number().int().optional(),
  /** Per JSON-RPC method; the key `*` applies to methods without an entry of their own. */
  methods: z.record(z.string(), methodFaultsSchema).optional(),
  /** sendTransaction: the next N transactions are processed, then the response is lost. */
  loseResponses: count.optional(),
  /**
   * How a response is lost: an HTTP 500 answer, an HTTP 504 (a gateway that gave up waiting for
   * the node), or the connection destroyed without an answer.
   */
  loseResponseMode: z.enum(['http500', 'http504', 'destroy']).optional(),
  /** sendTransaction: the next N transactions are answered with their signature and never land. */
  dropTransactions: count.optional(),
  /**
   * sendTransaction: the share (0..1) of the transactions this endpoint accepts that it forwards
   * to the leader, drawn from the seeded PRNG at each send; the rest are answered with their
   * signature and never land, as an unstaked node's forwards are dropped under load. 1 (the
   * default) forwards all; a rebroadcast of the same bytes draws again.
   */
  forwardShare: z.number().min(0).max(1).optional(),
  /**
   * sendTransaction: this endpoint (a staked sender path) refuses, with -32602, a transaction
   * that does not transfer at least `lamports` to `account` (a System transfer inside it); null
   * lifts it.
   */
  requireTip: z.union([z.strictObject({ account: base58Address, lamports: count.min(1) }), z.null()]).optional(),
  /**
   * sendTransaction: each transaction this endpoint takes is in flight for this many slots (at
   * most 10,000) and lands with the first block after them, if it is still valid then (its
   * blockhash unexpired, its nonce unmoved, not already landed); 0 lands at once.
   */
  landAfterSlots: count.max(MAX_LAND_AFTER_SLOTS).optional(),
  /**
   * This endpoint has not seen the blockhashes of the newest N blocks (at most 150: a node
   * further behind knows no blockhash the chain still accepts), as a
   * lagging node: getLatestBlockhash answers the one N blocks back, and sendTransaction's
   * preflight and simulateTransaction refuse a transaction signed against a newer one with
   * BlockhashNotFound. With skipPreflight it is forwarded to the leader and lands as usual.
   */
  blockhashLagSlots: count.max(BLOCKHASH_VALIDITY_BLOCKS).optional(),
  /**
   * A lying node: simulateTransaction reports this many units consumed (at most 1,400,000),
   * whatever the transaction used, its error and logs as they are; null tells the truth again.
   */
  simulateUnitsConsumed: z.union([count.max(MAX_COMPUTE_UNIT_LIMIT), z.null()]).optional(),
  /**
   * A lying history node: this endpoint's getSignaturesForAddress lists, for `address`,
   * `transactions` (1 to 1,000) forged transactions in the slot the fault is set, newest above
   * what landed there, and getTransaction answers them: transfers with the address as fee payer
   * whose signatures do not verify. Statuses do not know them. null removes them.
   */
  forgedHistory: z.union([z.strictObject({ address: base58Address, transactions: count.min(1).max(MAX_FORGED_TRANSACTIONS) }), z.null()]).optional(),
  /** Stops block production: no slot passes, nothing lands, no blockhash expires. */
  pauseBlocks: z.boolean().optional(),
  /**
   * This endpoint reports slots (getSlot, getBlockHeight, context slots) this many behind the
   * chain, and answers -32016 to a minContextSlot above that; it still serves current state.
   */
  slotLag: count.max(1_000_000).optional(),
  /** This endpoint's reported slot stops at its value when set (true), until false or clear. */
  freezeSlot: z.boolean().optional(),
  /**
   * Congestion on this chain: transactions priced below this many micro-lamports per compute
   * unit are accepted and wait; they land only if the floor falls before their blockhash
   * expires. Each slot completed while it is set reports at least it in getRecentPrioritizationFees.
   */
  priceFloor: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  /** getRecentPrioritizationFees stays at the last slot's fee: the history lags a sudden surge. */
  freezeFeeHistory: z.boolean().optional(),
  /**
   * What getRecentPrioritizationFees reports under a price floor: `floor` (the default), at least
   * the floor in every slot; `minimum`, as Agave's prioritization fee cache reports a real surge,
   * each slot's lowest landed price for the queried accounts with the block's zero-fee traffic
   * counted: 0 wherever none of them was written.
   */
  feeHistory: z.enum(['floor', 'minimum']).optional(),
  /**
   * This endpoint keeps no transaction history, as a node started without it: getSignaturesForAddress,
   * getTransaction and getSignatureStatuses with searchTransactionHistory answer -32011, and
   * getSignatureStatuses knows only the status cache (the last 300 slots).
   */
  noHistory: z.boolean().optional(),
  /**
   * A load balancer over two nodes: half the calls (drawn from the seeded PRNG) are answered by a node this many slots behind:
   * the chain as it was then (its accounts, slot and height, no transaction or blockhash of the
   * newer slots, -32016 to a minContextSlot above it), from copies kept since the fault was set
   * (./past-states.ts); 0 turns it off.
   */
  alternateBehindSlots: count.max(1_000_000).optional(),
  /**
   * Minority forks (the chain's, bank/minority-forks.ts): the next N slots that hold a
   * transaction each start a fork, seen at processed and abandoned before the confirmed bank
   * reaches it (statuses gone, state rolled back). Needs commitment lags (confirmed at least 1).
   */
  abandonSlots: count.max(1_000_000).optional(),
  /** Each slot that holds a transaction starts a minority fork with this probability (0..1, the seeded PRNG). */
  forkShare: z.number().min(0).max(1).optional(),
  /** Every call (admin methods aside) answers this HTTP status: a revoked key (401), a blocked address (403), a wrong path (404); null turns it off. */
  httpStatus: z.union([z.literal(401), z.literal(403), z.literal(404), z.null()]).optional(),
});

export type MethodFaults = z.infer<typeof methodFaultsSchema>;
export type FaultSettings = z.infer<typeof faultSettingsSchema>;
export type FaultKind = NonNullable<MethodFaults['errorKind']>;

/** Validates settings from any source; `knownMethods` catches misspelled method names. */
export function parseFaultSettings(input: unknown, knownMethods: ReadonlySet<string>): FaultSettings {
  const parsed = faultSettingsSchema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${['faults', ...issue.path].join('.')}: ${issue.message}`);
    throw invalidFaults(problems.join('; '));
  }
  for (const method of Object.keys(parsed.data.methods ?? {})) {
    if (method !== '*' && !knownMethods.has(method)) {
      throw invalidFaults(`faults.methods.${method}: unknown method (known: ${[...knownMethods].join(', ')}, or *)`);
    }
  }
  return parsed.data;
}

function invalidFaults(reason: string): DevnetError<'DEVNET__INVALID_OPTION'> {
  return new DevnetError('DEVNET__INVALID_OPTION', { option: 'faults', reason }, `invalid fault settings: ${reason}`);
}
