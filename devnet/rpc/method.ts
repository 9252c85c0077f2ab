import type { Bank } from '../bank/bank.js';
import type { Faults, LostResponse } from '../faults/faults.js';

/** What a JSON-RPC method handler sees. */

/** The version every node reports (getVersion, and `apiVersion` of each context). */
export const SOLANA_CORE_VERSION = '2.1.21';
export const FEATURE_SET = 1_416_569_292;

/** Per HTTP exchange: a handler may ask for its response to be lost (fault injection). */
export interface Exchange {
  lostResponse?: LostResponse;
}

export interface MethodContext {
  bank: Bank;
  faults: Faults;
  exchange: Exchange;
}

export type RpcMethod = (params: unknown[], ctx: MethodContext) => unknown;

/** The `context` of a `{context, value}` response. */
export function responseContext(bank: Bank): { slot: number; apiVersion: string } {
  return { slot: bank.slot, apiVersion: SOLANA_CORE_VERSION };
}
