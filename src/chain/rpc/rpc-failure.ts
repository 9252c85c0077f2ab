import { randomUUID } from 'node:crypto';
import { SolanaJSONRPCError } from '@solana/web3.js';
import { BridgeError, isBridgeError, type RpcFailureKind } from '../../errors.js';
import { HISTORY_NOT_AVAILABLE, isEndpointMisconfigured, isEndpointRefusal, isTransientRpcFailure } from '../../failure-policy.js';
import { type ChainSide, chainName, chainVariables } from '../../domain.js';
import { boundText } from '../../text.js';

/**
 * What an RPC answer says when it fails: the plain JSON-RPC call whose error answer becomes a
 * SolanaJSONRPCError, and every RPC failure as CHAIN__RPC_FAILED with the facts of what happened
 * (`kind`, HTTP status, JSON-RPC code, a preflight refusal's transaction error); whether one is
 * tried again is src/failure-policy.ts's decision. Messages name the chain by its setting, never
 * by its URL: RPC URLs often carry an API key.
 *
 * This is where a node's text enters the server. Every reason is bounded and cleaned
 * (src/text.ts: cut to 256 characters, control characters out, URLs cut to their origin), and
 * the node's error is kept as `cause` only in a bounded copy: the logs serialize the cause
 * chain, so a 1 MB error message must not ride along in it.
 */

/** "source chain RPC (BRIDGE_SOURCE_RPC_URL)", for messages. */
function rpcName(chain: ChainSide): string {
  return `${chainName(chain)} chain RPC (${chainVariables(chain).rpcUrl})`;
}

/** Where an endpoint's URL is set: the primary or one of the fallbacks. */
function urlSettings(chain: ChainSide): string {
  const { rpcUrl, fallbackUrls } = chainVariables(chain);
  return `${rpcUrl} (or the entry of ${fallbackUrls} with this origin)`;
}

/**
 * A plain JSON-RPC 2.0 call over the metered fetch, for what web3.js's Connection hides: its
 * sendRawTransaction turns a preflight refusal into a SendTransactionError that keeps the logs
 * but drops `data.err`, the InstructionError that names the program error. A JSON-RPC error
 * is thrown as web3.js's own SolanaJSONRPCError (code, message, data) so that one classifier
 * handles errors from both paths. `fetch` is the endpoint's metered fetch (./rpc-fetch.ts, which
 * reports its transport failures through this file: typed here as the global fetch it wraps).
 */
export async function jsonRpcCall(
  fetch: typeof globalThis.fetch,
  url: string,
  method: string,
  params: unknown[],
  signal: AbortSignal,
): Promise<unknown> {
  const id = randomUUID();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    signal,
  });
  // The metered fetch has already checked that the body is a JSON-RPC response.
  const body = (await response.json()) as { result?: unknown; error?: { code: number; message: string; data?: unknown } };
  if (body.error !== undefined) throw new SolanaJSONRPCError(body.error, method);
  return body.result;
}

/**
 * The longest wait a node's Retry-After buys: a node that asks for more (or sends an HTTP date
 * years ahead, or digits that overflow to Infinity) gets this, so one answer cannot take an
 * endpoint out for days. About a minute: a rate limiter's window is seconds to a minute.
 */
export const RETRY_AFTER_MAX_MS = 60_000;

/** A Retry-After header as honoured: `ms` within 0..RETRY_AFTER_MAX_MS, and what was wrong with it, if anything. */
export interface RetryAfter {
  ms: number;
  /** `too_long`: above the ceiling or not finite, cut to it; `unreadable`: neither delay-seconds nor an HTTP date, ignored. */
  problem?: 'too_long' | 'unreadable';
}

/**
 * An HTTP Retry-After header (RFC 9110: delay-seconds or an HTTP date, relative to `now`), clamped
 * to RETRY_AFTER_MAX_MS; undefined when absent.
 */
export function parseRetryAfter(header: string | null, now: number = Date.now()): RetryAfter | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  const asked = /^\d+$/.test(text) ? Number(text) * 1000 : Date.parse(text) - now;
  if (Number.isNaN(asked)) return { ms: 0, problem: 'unreadable' };
  if (asked > RETRY_AFTER_MAX_MS) return { ms: RETRY_AFTER_MAX_MS, problem: 'too_long' };
  return { ms: Math.max(0, asked) };
}

export function rpcFailure(
  chain: ChainSide,
  method: string,
  detail: { kind: RpcFailureKind; status?: number; rpcCode?: number; retryAfterMs?: number; retryAfterRefused?: string; reason: string },
  cause?: unknown,
): BridgeError<'CHAIN__RPC_FAILED'> {
  const { kind, status, rpcCode, retryAfterMs, retryAfterRefused, reason } = detail;
  const advice = isEndpointRefusal(detail)
    ? 'this endpoint refuses the server: check its key or allow-list; the call moves to the next endpoint'
    : isEndpointMisconfigured(detail)
      ? `a configuration error, not transient: check the scheme (https or http) and the port of ${urlSettings(chain)}`
      : isTransientRpcFailure(detail)
        ? 'transient; it is retried'
        : 'not transient: check the RPC endpoint and its version';
  return new BridgeError(
    'CHAIN__RPC_FAILED',
    {
      chain,
      method,
      kind,
      ...(status === undefined ? {} : { status }),
      ...(rpcCode === undefined ? {} : { rpcCode }),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      ...(retryAfterRefused === undefined ? {} : { retryAfterRefused }),
    },
    { what: `${method} on the ${rpcName(chain)}`, reason: boundText(reason), advice },
    { cause: boundedCause(cause) },
  );
}

// A preflight refusal's data (err, logs) is what transaction-sender decodes; a real node's
// logs stay far below this. Larger data is dropped rather than carried into logs.
const MAX_CAUSE_DATA_CHARS = 64 * 1024;

/** The node's error with its message (and stack) bounded; a JSON-RPC error keeps its code and bounded data. */
function boundedCause(cause: unknown): unknown {
  if (cause instanceof SolanaJSONRPCError) {
    const { code } = cause;
    const data: unknown = cause.data;
    const json = data === undefined ? undefined : JSON.stringify(data);
    const keptData = json !== undefined && json.length <= MAX_CAUSE_DATA_CHARS ? data : undefined;
    return new SolanaJSONRPCError({ code, message: boundText(cause.message), data: keptData });
  }
  if (!(cause instanceof Error) || boundText(cause.message) === cause.message) return cause;
  const bounded = new Error(boundText(cause.message), { cause: cause.cause });
  bounded.name = cause.name;
  return bounded;
}

/**
 * A CHAIN__RPC_FAILED in a few words, for a summary of many failures: "HTTP 500 from
 * https://rpc.example.com", "JSON-RPC error -32005", "timeout after 10000 ms".
 */
export function shortRpcFailure(err: BridgeError<'CHAIN__RPC_FAILED'>): string {
  const { status, rpcCode, endpoint } = err.context;
  const what =
    status !== undefined
      ? `HTTP ${status}`
      : rpcCode !== undefined
        ? `JSON-RPC error ${rpcCode}`
        : err.message.replace(/^.*? failed: /, '').replace(/ \((?:not )?transient[^)]*\)$/, '');
  return endpoint === undefined ? what : `${what} from ${endpoint}`;
}

/**
 * Any error out of an RPC call as CHAIN__RPC_FAILED. Transport failures arrive already
 * classified from the metered fetch; JSON-RPC errors carry their code; a response of the wrong
 * shape (web3.js's StructError) is treated like a malformed body.
 */
export function classifyRpcError(chain: ChainSide, method: string, err: unknown): BridgeError {
  if (isBridgeError(err)) return err;
  if (err instanceof SolanaJSONRPCError && typeof err.code === 'number') {
    const rpcCode = err.code;
    const reason = `JSON-RPC error ${rpcCode}: ${err.message}`;
    return rpcFailure(chain, method, { kind: 'rpc', rpcCode, reason }, err);
  }
  if (err instanceof Error && err.name === 'StructError') {
    return rpcFailure(chain, method, { kind: 'malformed', reason: `response of an unexpected shape: ${err.message}` }, err);
  }
  const reason = err instanceof Error ? err.message : String(err);
  return rpcFailure(chain, method, { kind: 'unexpected', reason: `unexpected failure: ${reason}` }, err);
}

export interface PreflightFailure {
  /** The simulated transaction's error, e.g. `{"InstructionError":[0,{"Custom":6001}]}`. */
  transactionError: unknown;
  logs: string[];
}

/**
 * The transaction error of a sendTransaction that the node refused in preflight (JSON-RPC
 * -32002 with `data.err`), or undefined for any other failure.
 */
export function preflightFailure(err: unknown): PreflightFailure | undefined {
  if (!isBridgeError(err, 'CHAIN__RPC_FAILED') || err.context.rpcCode !== -32002) return undefined;
  const cause = err.cause;
  if (!(cause instanceof SolanaJSONRPCError)) return undefined;
  const data: unknown = cause.data;
  if (typeof data !== 'object' || data === null || !('err' in data) || data.err === null || data.err === undefined) {
    return undefined;
  }
  const lines: unknown[] = 'logs' in data && Array.isArray(data.logs) ? data.logs : [];
  const logs = lines.filter((line): line is string => typeof line === 'string');
  return { transactionError: data.err, logs };
}

/** The failure of a history read when no endpoint of the chain keeps transaction history. */
export function isHistoryUnavailable(err: unknown): boolean {
  return isBridgeError(err, 'CHAIN__RPC_FAILED') && err.context.rpcCode === HISTORY_NOT_AVAILABLE;
}
