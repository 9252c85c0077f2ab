import type { DepositResultWire } from './bridge-chains.js';
import { BridgeError } from '../../errors.js';
import { REJECTION_REASONS } from '../codec/layout.js';
import type { DepositResult } from '../types.js';

/**
 * DepositResult (bigint amounts) <-> DepositResultWire (decimal strings), the JSON-safe form
 * votes carry through the crank machine's context. Both directions check every field, since a
 * wire value may have come through JSON.
 */

const U64_MAX = (1n << 64n) - 1n;
const CANONICAL_DECIMAL = /^(0|[1-9][0-9]{0,19})$/;

/** A vote only ever carries a settled result: None has no wire form. */
export function depositResultToWire(result: DepositResult, field = 'result'): DepositResultWire {
  switch (result.kind) {
    case 'Confirmed':
      return { kind: 'Confirmed', amount: result.amount.toString() };
    case 'Rejected':
      return { kind: 'Rejected', reason: result.reason };
    case 'None':
      throw invalidVote(field, 'None', 'a Confirmed or Rejected result (a vote never carries None: a bug in the vote planner)');
  }
}

export function depositResultFromWire(wire: DepositResultWire, field = 'result'): DepositResult {
  switch (wire.kind) {
    case 'Confirmed':
      return { kind: 'Confirmed', amount: parseU64(wire.amount, `${field}.amount`) };
    case 'Rejected':
      if (REJECTION_REASONS.includes(wire.reason)) return { kind: 'Rejected', reason: wire.reason };
      throw invalidVote(`${field}.reason`, wire.reason, `one of ${REJECTION_REASONS.join(', ')}`);
    default:
      throw invalidVote(`${field}.kind`, (wire as { kind: unknown }).kind, 'Confirmed or Rejected');
  }
}

/** Parses a canonical u64 decimal string: digits only, no sign or leading zeros, <= 2^64-1. */
export function parseU64(value: string, field: string): bigint {
  const parsed = typeof value === 'string' && CANONICAL_DECIMAL.test(value) ? BigInt(value) : undefined;
  if (parsed !== undefined && parsed <= U64_MAX) return parsed;
  throw invalidVote(field, value, `a u64 as a decimal string of digits (0 ..= ${U64_MAX})`);
}

function invalidVote(field: string, value: unknown, expected: string): BridgeError<'CHAIN__INVALID_VOTE'> {
  const shown = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return new BridgeError('CHAIN__INVALID_VOTE', { field, value: String(value), reason: `expected ${expected}` }, { shown });
}
