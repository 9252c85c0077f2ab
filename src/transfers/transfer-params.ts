import * as z from 'zod';
import { BridgeError } from '../errors.js';

/**
 * Parameters of GET /transfers and `npm run ops`: non-negative decimal integers, declared as zod
 * schemas that the route parses its query and path with (and the CLI its arguments), so that a
 * bad one is a 400 naming the parameter, never a chain read.
 */

const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;

/** A non-negative decimal integer, at most `max`, as a query string or an argument carries it. */
export function integerParameter(max?: number) {
  return z.unknown().transform((raw, ctx) => {
    const text = typeof raw === 'string' ? raw : String(raw);
    if (!DECIMAL.test(text) || !Number.isSafeInteger(Number(text))) return refuse(ctx, text, 'expected a non-negative integer');
    const value = Number(text);
    if (max !== undefined && value > max) return refuse(ctx, text, `expected at most ${max}`);
    return value;
  });
}

function refuse(ctx: z.RefinementCtx, value: string, reason: string): never {
  ctx.addIssue({ code: 'custom', message: reason, params: { value } });
  return z.NEVER;
}

/** The parameters `schema` reads from `raw`; throws TRANSFER__INVALID_PARAMETER naming the first bad one. */
export function parseParameters<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const [issue] = result.error.issues;
  const value = issue?.code === 'custom' ? String(issue.params?.['value']) : String(raw);
  throw invalidParameter(String(issue?.path[0] ?? 'parameters'), value, issue?.message ?? 'invalid');
}

function invalidParameter(parameter: string, value: string, reason: string): BridgeError<'TRANSFER__INVALID_PARAMETER'> {
  const shown = value.length > 40 ? `${value.slice(0, 40)}...` : value;
  return new BridgeError('TRANSFER__INVALID_PARAMETER', { parameter, value: shown, reason });
}
