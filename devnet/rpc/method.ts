import type { Bank } from '../bank/bank.js';
import type { BankView } from '../bank/commitment-banks.js';
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
  /** The chain itself: where transactions go, what is the cluster's rather than a bank's. */
  bank: Bank;
  faults: Faults;
  exchange: Exchange;
  /**
   * The bank a read is answered from (Agave's get_bank_with_config): the one `config.commitment`
   * names (finalized when none), as this endpoint sees it (its faults' lag), after checking the
   * commitment and `config.minContextSlot` against that bank (-32016 with its slot).
   */
  at(config: Readonly<Record<string, unknown>>): BankView;
}

export type RpcMethod = (params: unknown[], ctx: MethodContext) => unknown;

/** The `context` of a `{context, value}` response. */
export function responseContext(bank: { slot: number }): { slot: number; apiVersion: string } {
  return { slot: bank.slot, apiVersion: SOLANA_CORE_VERSION };
}
