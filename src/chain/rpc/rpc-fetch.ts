import { AsyncLocalStorage } from 'node:async_hooks';
import type { BridgeError, RpcFailureKind } from '../../errors.js';
import { isBridgeError } from '../../errors.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { ChainSide } from '../../domain.js';
import { MAX_RESPONSE_BYTES, readBoundedBody } from './bounded-body.js';
import { boundText } from '../../text.js';
import { parseRetryAfter, RETRY_AFTER_MAX_MS, rpcFailure, type RetryAfter } from './rpc-failure.js';

/**
 * The one HTTP path of every JSON-RPC request to a chain: web3.js's Connection and our own
 * JSON-RPC calls both go through it. It adds, by wrapping fetch:
 * - a timeout per request (BRIDGE_RPC_TIMEOUT_MS) combined with the caller's AbortSignal;
 * - per-chain, per-method metrics: requests, errors by kind, latency;
 * - classification of transport faults into CHAIN__RPC_FAILED (HTTP status, timeout, network,
 *   a body that is not a JSON-RPC response, a body above MAX_RESPONSE_BYTES: ./bounded-body.ts);
 * - a redirect answered as the failure it is (HTTP 3xx), never followed.
 *
 * web3.js v1's Connection methods take no AbortSignal. The caller's signal reaches this fetch
 * through `withCallSignal`, an AsyncLocalStorage scope around the Connection call, so that
 * aborting an action cancels its HTTP request instead of leaving it to run until the timeout.
 */

export type RpcFetch = typeof globalThis.fetch;

const MAX_QUOTED_HEADER_CHARS = 64;

/** The failure kinds this fetch counts in bridge_rpc_errors_total (and the pool per endpoint). */
export const TRANSPORT_FAILURE_KINDS = [
  'timeout',
  'http',
  'rpc',
  'network',
  'tls',
  'malformed',
  'too_large',
] as const satisfies readonly RpcFailureKind[];

const callSignal = new AsyncLocalStorage<AbortSignal>();

/** Runs `call` so that every RPC request it makes is aborted when `signal` aborts. */
export function withCallSignal<T>(signal: AbortSignal, call: () => Promise<T>): Promise<T> {
  return callSignal.run(signal, call);
}

export interface RpcFetchOptions {
  chain: ChainSide;
  timeoutMs: number;
  metrics: Metrics;
  /** The underlying fetch; globalThis.fetch unless a test injects one. */
  fetch?: RpcFetch;
  /** Told the kind of each transport failure, for per-endpoint metrics. */
  onFailure?: (kind: RpcFailureKind) => void;
  /** MAX_RESPONSE_BYTES unless a test sets another. */
  maxResponseBytes?: number;
}

export function createRpcFetch(options: RpcFetchOptions): RpcFetch {
  const { chain, timeoutMs, metrics } = options;
  const maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const baseFetch = options.fetch ?? globalThis.fetch;

  function fail(method: string, error: BridgeError<'CHAIN__RPC_FAILED'>): BridgeError {
    const { kind } = error.context;
    metrics.rpcErrors.inc({ chain, method, kind });
    options.onFailure?.(kind);
    return error;
  }

  async function send(input: Parameters<RpcFetch>[0], init: RequestInit, method: string, signal: AbortSignal): Promise<Response> {
    // A redirect is an answer, never followed: a node must not send a signed transaction, or
    // any request, to an origin nobody configured.
    const response = await baseFetch(input, { ...init, signal, redirect: 'manual' });
    // The body is read under the same timeout: a node that stalls mid-body times out too.
    const read = await readBoundedBody(response, maxResponseBytes);
    if (read.kind === 'too_large') {
      const reason = `the response from ${originOf(input)} was too large: ${read.receivedBytes} bytes received, above the ${maxResponseBytes}-byte limit of one answer; refused before reading the rest`;
      throw fail(method, rpcFailure(chain, method, { kind: 'too_large', reason }));
    }
    const body = read.text;
    if (!response.ok) {
      const status = response.status;
      const header = response.headers.get('retry-after');
      const retryAfter = parseRetryAfter(header);
      // A node's header, quoted: bounded so that the note after it survives boundText's cut.
      const shown = header === null ? undefined : boundText(header, MAX_QUOTED_HEADER_CHARS);
      const reason = `HTTP ${status} ${response.statusText}${shown === undefined ? '' : ` (Retry-After: ${shown}${retryAfterNote(retryAfter)})`}`;
      const detail = {
        kind: 'http' as const,
        status,
        reason,
        ...(retryAfter === undefined || retryAfter.problem === 'unreadable' ? {} : { retryAfterMs: retryAfter.ms }),
        ...(retryAfter?.problem === undefined || shown === undefined ? {} : { retryAfterRefused: shown }),
      };
      throw fail(method, rpcFailure(chain, method, detail));
    }
    const kind = jsonRpcBodyKind(body);
    if (kind === 'malformed') {
      const start = JSON.stringify(body.slice(0, 40));
      const reason = `the response is not a JSON-RPC response (${body.length} bytes starting ${start})`;
      throw fail(method, rpcFailure(chain, method, { kind: 'malformed', reason }));
    }
    if (kind === 'error') metrics.rpcErrors.inc({ chain, method, kind: 'rpc' });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }

  return async function rpcFetch(input, init = {}) {
    const method = rpcMethodOf(init.body);
    const caller = callSignal.getStore() ?? init.signal ?? undefined;
    caller?.throwIfAborted();
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = caller === undefined ? timeout : AbortSignal.any([caller, timeout]);
    metrics.rpcRequests.inc({ chain, method });
    const endTimer = metrics.rpcDuration.startTimer({ chain, method });
    try {
      return await send(input, init, method, signal);
    } catch (err) {
      // An abort by the caller (shutdown, a cancelled action) is not a fault of the node.
      if (caller?.aborted === true) throw caller.reason;
      if (isBridgeError(err)) throw err;
      if (timeout.aborted) {
        const reason = `no response within ${timeoutMs} ms (BRIDGE_RPC_TIMEOUT_MS)`;
        throw fail(method, rpcFailure(chain, method, { kind: 'timeout', reason }, err));
      }
      const origin = originOf(input);
      const tls = tlsFailure(err);
      if (tls !== undefined) {
        const reason = `the TLS handshake with ${origin} failed (${tls})${TLS_HINTS[tls] ?? `: ${describeCause(err)}`}`;
        throw fail(method, rpcFailure(chain, method, { kind: 'tls', reason }, err));
      }
      const reason = `network error: ${describeCause(err)}`;
      throw fail(method, rpcFailure(chain, method, { kind: 'network', reason }, err));
    } finally {
      endTimer();
    }
  };
}

function retryAfterNote(retryAfter: RetryAfter | undefined): string {
  if (retryAfter?.problem === 'too_long') return `, above the ${RETRY_AFTER_MAX_MS / 1000} s ceiling: honoured as ${RETRY_AFTER_MAX_MS / 1000} s`;
  if (retryAfter?.problem === 'unreadable') return ', unreadable: ignored';
  return '';
}

/** The JSON-RPC method of a request body, for metric labels ("batch" for a batch request). */
export function rpcMethodOf(body: unknown): string {
  if (typeof body !== 'string') return 'unknown';
  try {
    const request: unknown = JSON.parse(body);
    if (Array.isArray(request)) return 'batch';
    if (typeof request === 'object' && request !== null && 'method' in request && typeof request.method === 'string') {
      return request.method;
    }
  } catch {
    // A body we did not write as JSON: label it, the request still goes out.
  }
  return 'unknown';
}

function jsonRpcBodyKind(body: string): 'result' | 'error' | 'malformed' {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return 'malformed';
  }
  const responses = Array.isArray(parsed) ? parsed : [parsed];
  if (responses.length === 0 || !responses.every(isJsonRpcResponse)) return 'malformed';
  return responses.some((response) => 'error' in response) ? 'error' : 'result';
}

function isJsonRpcResponse(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && ('result' in value || 'error' in value);
}

function originOf(input: Parameters<RpcFetch>[0]): string {
  return new URL(input instanceof Request ? input.url : String(input)).origin;
}

// OpenSSL's and Node's codes for a handshake that cannot succeed as configured.
const TLS_CODE = /^(?:ERR_SSL_|ERR_TLS_|EPROTO$|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_(?:VERIFY|GET)_)/;
const TLS_HINTS: Record<string, string> = {
  ERR_SSL_WRONG_VERSION_NUMBER: ': the node does not speak TLS on this port: an https:// URL to a plain-HTTP node?',
  ERR_SSL_PACKET_LENGTH_TOO_LONG: ': the node does not speak TLS on this port: an https:// URL to a plain-HTTP node?',
};

/** The TLS error code under a failed fetch (undici keeps the socket's error as `cause`), or undefined. */
function tlsFailure(err: unknown): string | undefined {
  const code = (err instanceof Error ? (err.cause as { code?: unknown } | undefined)?.code : undefined) ?? undefined;
  return typeof code === 'string' && TLS_CODE.test(code) ? code : undefined;
}

// undici reports "fetch failed" and keeps the socket error (ECONNREFUSED, ECONNRESET) as cause.
function describeCause(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause;
  if (cause instanceof Error) return `${err.message} (${cause.message})`;
  return err.message;
}
