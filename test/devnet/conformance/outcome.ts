/**
 * What one transaction did, in terms both runtimes can be read in: the JSON-RPC shapes the
 * devnet answers. A refusal before the bank (bad signature, malformed or oversized bytes) is the
 * JSON-RPC error code a node answers; anything the bank decides is its `TransactionError` JSON
 * (`"BlockhashNotFound"`, `{"InstructionError":[0,"ComputationalBudgetExceeded"]}`, ...).
 */

export type ErrorShape = { rpcError: number } | { err: unknown } | null;

export interface Outcome {
  /** The transaction was committed (its fee charged, its status recorded). */
  landed: boolean;
  error: ErrorShape;
  /** Lamports the case's accounts lost in total: the fee (transfers only move lamports between them). */
  fee: bigint;
  unitsConsumed: number;
  /** Every account of the case after the transaction (null: no account, as a node reads one emptied to 0 lamports). */
  balances: Record<string, bigint | null>;
}

/** One line per transaction, bigints as decimal strings, for a readable counterexample. */
export function describeOutcome(outcome: Outcome): string {
  return JSON.stringify(outcome, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
}
