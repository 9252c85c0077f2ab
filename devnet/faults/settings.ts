import { z } from 'zod';
import { DevnetError } from '../devnet-error.js';

/**
 * Fault settings, for the typed API (`node.faults.set`) and the admin JSON-RPC method
 * `devnet_setFaults` alike. Unknown keys are errors, so a typo never silently injects nothing.
 */

const count = z.number().int().min(0);

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
  /** How a response is lost: an HTTP 500 answer, or the connection destroyed without an answer. */
  loseResponseMode: z.enum(['http500', 'destroy']).optional(),
  /** sendTransaction: the next N transactions are answered with their signature and never land. */
  dropTransactions: count.optional(),
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
