import type { DepositResult } from '../../src/chain/types.js';

export function sameResult(a: DepositResult, b: DepositResult): boolean {
  if (a.kind === 'Confirmed' && b.kind === 'Confirmed') return a.amount === b.amount;
  if (a.kind === 'Rejected' && b.kind === 'Rejected') return a.reason === b.reason;
  return a.kind === b.kind;
}

/** `Confirmed(900)`, `Rejected(TokenPairFrozen)` or `None`, for program logs and error details. */
export function describeResult(result: DepositResult): string {
  if (result.kind === 'Confirmed') return `Confirmed(${result.amount})`;
  if (result.kind === 'Rejected') return `Rejected(${result.reason})`;
  return 'None';
}
