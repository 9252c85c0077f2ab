import { STATUS_CODES } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { describeError, isBridgeError, type BridgeErrorCode } from '../errors.js';

/**
 * Every error response is JSON `{ "error": <snake_case code>, "message": <what happened and
 * what to do> }`: fastify's own errors (body too large, bad media type, auth) are mapped here
 * so that no response leaves in fastify's default shape.
 */

interface ErrorBody {
  error: string;
  message: string;
}

export interface ErrorResponse {
  statusCode: number;
  body: ErrorBody;
  headers?: Record<string, string>;
}

/** A cycle usually takes a second or two; the waiting requests are answered by the next one. */
const BUSY_RETRY_AFTER_SECS = 5;
/** A transfer read takes a few RPC round trips; by then a slot is free or the answer cached. */
const TRANSFERS_BUSY_RETRY_AFTER_SECS = 1;
/** A failing RPC is tried again by the next request; sooner would only add load to a struggling node. */
const RPC_UNAVAILABLE_RETRY_AFTER_SECS = 5;

/** Shown for every authentication failure alike: missing header, wrong user, wrong password. */
const UNAUTHORIZED: ErrorBody = {
  error: 'unauthorized',
  message: 'admin endpoints require HTTP Basic credentials (realm "bridge-admin")',
};

/**
 * What each BridgeError code answers (fastify keeps one such table per error code): a status and
 * an `error` code, or `internal` with the reason the code cannot reach a request except by a bug,
 * answered 500 `internal_error` and logged. A code added to src/errors.ts does not compile until
 * it has a row here.
 */
type BridgeErrorAnswer = { statusCode: number; error: string; retryAfterSecs?: number; message?: (err: Error) => string } | { internal: string };

export const BRIDGE_ERROR_ANSWERS = {
  CRANK__DISABLED: { statusCode: 409, error: 'crank_disabled' },
  CRANK__STOPPED: { statusCode: 503, error: 'shutting_down' },
  CRANK__BUSY: { statusCode: 503, error: 'crank_busy', retryAfterSecs: BUSY_RETRY_AFTER_SECS },
  TRANSFER__BUSY: { statusCode: 503, error: 'transfers_busy', retryAfterSecs: TRANSFERS_BUSY_RETRY_AFTER_SECS },
  TRANSFER__RATE_EXCEEDED: { statusCode: 503, error: 'transfers_busy', retryAfterSecs: TRANSFERS_BUSY_RETRY_AFTER_SECS },
  CHAIN__RPC_FAILED: {
    statusCode: 503,
    error: 'rpc_unavailable',
    retryAfterSecs: RPC_UNAVAILABLE_RETRY_AFTER_SECS,
    message: (err) => `the chain could not be read: ${err.message}`,
  },
  TRANSFER__INVALID_PARAMETER: { statusCode: 400, error: 'invalid_parameter' },
  TRANSFER__NOT_FOUND: { statusCode: 404, error: 'transfer_not_found' },
  CONFIG__INVALID: { internal: 'the configuration is checked before the server listens' },
  CHAIN__MALFORMED_ACCOUNT: { internal: 'a tracker read by GET /transfers that does not decode: the wrong program or a bug, not the request' },
  CHAIN__INVALID_DISCRIMINATOR: { internal: 'a tracker read by GET /transfers that does not decode: the wrong program or a bug, not the request' },
  CHAIN__INVALID_OWNER: { internal: 'a configuration error (the program id) that the request cannot fix' },
  CHAIN__ACCOUNT_NOT_FOUND: { internal: 'a configuration error (the chain ids, the RPC URL) that the request cannot fix' },
  CHAIN__INVALID_CHAIN_ID: { internal: 'a configuration error (the chain ids) that the request cannot fix' },
  CHAIN__MALFORMED_INSTRUCTION: { internal: 'instructions are decoded by the crank and the devnet, never by a route' },
  CHAIN__INVALID_VOTE: { internal: 'votes are built by the crank, never by a route' },
  CHAIN__INVALID_NONCE_ACCOUNT: { internal: 'nonce lanes are read by the crank, never by a route' },
  CHAIN__INSUFFICIENT_FUNDS: { internal: 'raised by npm run ops -- nonce init, never by a route' },
  CHAIN__AUTHORITY_NOT_FOUND: { internal: 'the authority is looked up by the crank, never by a route' },
  CHAIN__FAILED_TO_SUBMIT: { internal: 'submitted by the crank, never by a route' },
  SIGNER__UNAVAILABLE: { internal: 'the key signs in the crank, never in a route' },
  CRANK__ATTEMPT_DEADLINE_EXCEEDED: { internal: 'an attempt ends inside the crank, never in a route' },
  CRANK__ENTRY_NOT_FOUND: { internal: 'the planners run inside the crank, never in a route' },
} satisfies Record<BridgeErrorCode, BridgeErrorAnswer>;

export function errorResponse(err: unknown, requestId: string, bodyLimit: number): ErrorResponse {
  if (isBridgeError(err)) {
    const answer: BridgeErrorAnswer = BRIDGE_ERROR_ANSWERS[err.code];
    if ('internal' in answer) return internalError(requestId);
    const { statusCode, error, retryAfterSecs, message } = answer;
    const body = { error, message: message === undefined ? err.message : message(err) };
    return retryAfterSecs === undefined ? { statusCode, body } : { statusCode, headers: { 'retry-after': String(retryAfterSecs) }, body };
  }
  const statusCode = errorStatusCode(err);
  if (statusCode === 401) return { statusCode, body: UNAUTHORIZED };
  if (statusCode === 413) {
    return { statusCode, body: { error: 'payload_too_large', message: `no endpoint takes a body; bodies over ${bodyLimit} bytes are refused` } };
  }
  if (statusCode >= 400 && statusCode < 500) return { statusCode, body: { error: statusCodeName(statusCode), message: describeError(err) } };
  return internalError(requestId);
}

function internalError(requestId: string): ErrorResponse {
  return {
    statusCode: 500,
    body: { error: 'internal_error', message: `internal error; the server log has the details under request id ${requestId}` },
  };
}

/** fastify's and its plugins' errors carry the HTTP status to answer with. */
function errorStatusCode(err: unknown): number {
  const statusCode = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof statusCode === 'number' && statusCode >= 400 && statusCode <= 599 ? statusCode : 500;
}

/** 415 -> "unsupported_media_type". */
export function statusCodeName(statusCode: number): string {
  return (STATUS_CODES[statusCode] ?? 'error').toLowerCase().replace(/[^a-z0-9]+/g, '_');
}

export function sendError(reply: FastifyReply, { statusCode, body, headers = {} }: ErrorResponse): FastifyReply {
  return reply.code(statusCode).headers(headers).type('application/json; charset=utf-8').send(body);
}

/**
 * 503 is a condition the server names in its answer (busy, shutting down, RPC unavailable) and
 * reports elsewhere once: not an error line per request. Other 5xx are bugs: logged as errors.
 */
export function isServerFault(statusCode: number): boolean {
  return statusCode >= 500 && statusCode !== 503;
}

export function logRequestError(request: FastifyRequest, err: unknown, statusCode: number): void {
  if (isServerFault(statusCode)) request.log.error({ err }, 'request failed');
  else request.log.debug({ reason: describeError(err) }, 'request refused');
}
