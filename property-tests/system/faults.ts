import type { FaultSettings } from '../../devnet/index.js';
import type { Lie } from './liars.js';

/**
 * The faults a FaultOn command injects into one node, through the devnet's typed fault API
 * (docs/devnet.md, Faults): HTTP 500 and 429, RPC errors, random error rates, latency, lost
 * sendTransaction responses (the transaction lands, the answer is lost: HTTP 500, a gateway's
 * 504, or a destroyed connection), dropped
 * transactions (answered with their signature, never landed), in-flight delays (a transaction
 * lands `slots` blocks after it was sent), a fee surge the history does not show (a price floor
 * with Agave's per-slot minimums in getRecentPrioritizationFees) and a lagging fallback endpoint
 * (it has not seen the newest `slots` blockhashes: its preflight refuses transactions signed
 * against them with BlockhashNotFound). Which endpoints each goes on: BridgeSystem.faultOn.
 * One lying endpoint of issue 39 (the primary or the fallback): old state (a load balancer half of whose answers come from a
 * node `slots` behind), forged history entries of an honest authority's key (their signatures do
 * not verify), and the lies of ./liars.ts (inflated slots, forged nonce values, a replayed old
 * transaction of the key), told by the fetch the honest cranks use.
 */

export const FAULT_METHODS = [
  '*',
  'getAccountInfo',
  'getMultipleAccounts',
  'getBalance',
  'getLatestBlockhash',
  'sendTransaction',
  'getSignatureStatuses',
  'getEpochInfo',
] as const;
type FaultMethod = (typeof FAULT_METHODS)[number];

export type FaultSpec =
  | { kind: 'http500' | 'http429' | 'rpcErrors'; method: FaultMethod; count: number }
  | { kind: 'errorRate'; method: FaultMethod; rate: number; errorKind: 'rpc' | 'http500' | 'http429'; seed: number }
  | { kind: 'latency'; method: FaultMethod; ms: number }
  | { kind: 'loseResponses'; count: number; mode: 'http500' | 'http504' | 'destroy' }
  | { kind: 'dropTransactions'; count: number }
  | { kind: 'inFlight'; slots: number }
  | { kind: 'hiddenSurge'; priceFloor: number }
  | { kind: 'lagging'; slots: number }
  | { kind: 'oldState'; slots: number; node: LyingNode }
  | LieSpec;

/** Which endpoint of the chain lies: the one the cranks read from while it answers, or the one they turn to. */
type LyingNode = 'primary' | 'fallback';

/** What BridgeSystem.faultOn tells through the honest cranks' fetch, or with an honest authority's address. */
export type LieSpec = { kind: 'lie'; lie: Lie; node: LyingNode } | { kind: 'forgedHistory'; crank: number; transactions: number; node: LyingNode };

export function faultSettings(spec: Exclude<FaultSpec, LieSpec>): FaultSettings {
  switch (spec.kind) {
    case 'http500':
    case 'http429':
    case 'rpcErrors':
      return { methods: { [spec.method]: { [spec.kind]: spec.count, retryAfterSecs: 0 } } };
    case 'errorRate':
      return { seed: spec.seed, methods: { [spec.method]: { errorRate: spec.rate, errorKind: spec.errorKind, retryAfterSecs: 0 } } };
    case 'latency':
      return { methods: { [spec.method]: { latencyMs: spec.ms } } };
    case 'loseResponses':
      return { loseResponses: spec.count, loseResponseMode: spec.mode };
    case 'dropTransactions':
      return { dropTransactions: spec.count };
    case 'inFlight':
      return { landAfterSlots: spec.slots };
    case 'hiddenSurge':
      return { priceFloor: spec.priceFloor, feeHistory: 'minimum' };
    case 'lagging':
      return { blockhashLagSlots: spec.slots };
    case 'oldState':
      return { alternateBehindSlots: spec.slots };
  }
}

export function describeFault(spec: FaultSpec): string {
  switch (spec.kind) {
    case 'http500':
    case 'http429':
    case 'rpcErrors':
      return `${spec.method} ${spec.kind} x${spec.count}`;
    case 'errorRate':
      return `${spec.method} ${spec.errorKind} p=${spec.rate} seed=${spec.seed}`;
    case 'latency':
      return `${spec.method} +${spec.ms}ms`;
    case 'loseResponses':
      return `lose ${spec.count} sendTransaction responses (${spec.mode})`;
    case 'dropTransactions':
      return `drop ${spec.count} transactions`;
    case 'inFlight':
      return `transactions land ${spec.slots} slot(s) after they are sent`;
    case 'hiddenSurge':
      return `price floor ${spec.priceFloor} micro-lamports/CU, fee history of per-slot minimums`;
    case 'lagging':
      return `the fallback endpoint lags ${spec.slots} blockhash(es)`;
    case 'oldState':
      return `half the ${spec.node} endpoint's answers come from a node ${spec.slots} slot(s) behind`;
    case 'forgedHistory':
      return `the ${spec.node} endpoint's history lists ${spec.transactions} forged transaction(s) of honest authority ${spec.crank}'s key`;
    case 'lie':
      return `the ${spec.node} endpoint lies: ${spec.lie}`;
  }
}
