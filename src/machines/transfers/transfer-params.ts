import { BridgeError } from '../../errors.js';

/**
 * Parameters of GET /transfers and `npm run ops`: non-negative decimal integers, checked here so
 * that a bad one is a 400 naming the parameter, never a chain read.
 */

const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;

export function integerParameter(parameter: string, raw: unknown, bounds: { fallback?: number; max?: number } = {}): number {
  if (raw === undefined && bounds.fallback !== undefined) return bounds.fallback;
  const text = typeof raw === 'string' ? raw : String(raw);
  if (!DECIMAL.test(text) || !Number.isSafeInteger(Number(text))) {
    throw invalidParameter(parameter, text, 'expected a non-negative integer');
  }
  const value = Number(text);
  if (bounds.max !== undefined && value > bounds.max) throw invalidParameter(parameter, text, `expected at most ${bounds.max}`);
  return value;
}

function invalidParameter(parameter: string, value: string, reason: string): BridgeError<'TRANSFER__INVALID_PARAMETER'> {
  const shown = value.length > 40 ? `${value.slice(0, 40)}...` : value;
  return new BridgeError('TRANSFER__INVALID_PARAMETER', { parameter, value: shown, reason }, `${parameter}: ${reason}, got ${JSON.stringify(shown)}`);
}
