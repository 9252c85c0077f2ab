import { STATUS_CODES } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { describeError, isBridgeError } from '../errors.js';

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

export function errorResponse(err: unknown, requestId: string, bodyLimit: number): ErrorResponse {
  if (isBridgeError(err, 'CRANK__DISABLED')) return { statusCode: 409, body: { error: 'crank_disabled', message: err.message } };
  if (isBridgeError(err, 'CRANK__STOPPED')) return { statusCode: 503, body: { error: 'shutting_down', message: err.message } };
  if (isBridgeError(err, 'CRANK__BUSY')) {
    return { statusCode: 503, headers: { 'retry-after': String(BUSY_RETRY_AFTER_SECS) }, body: { error: 'crank_busy', message: err.message } };
  }
  if (isBridgeError(err, 'TRANSFER__BUSY') || isBridgeError(err, 'TRANSFER__RATE_EXCEEDED')) {
    return { statusCode: 503, headers: { 'retry-after': String(TRANSFERS_BUSY_RETRY_AFTER_SECS) }, body: { error: 'transfers_busy', message: err.message } };
  }
  if (isBridgeError(err, 'CHAIN__RPC_FAILED')) {
    return {
      statusCode: 503,
      headers: { 'retry-after': String(RPC_UNAVAILABLE_RETRY_AFTER_SECS) },
      body: { error: 'rpc_unavailable', message: `the chain could not be read: ${err.message}` },
    };
  }
  if (isBridgeError(err, 'TRANSFER__INVALID_PARAMETER')) return { statusCode: 400, body: { error: 'invalid_parameter', message: err.message } };
  if (isBridgeError(err, 'TRANSFER__NOT_FOUND')) return { statusCode: 404, body: { error: 'transfer_not_found', message: err.message } };
  const statusCode = errorStatusCode(err);
  if (statusCode === 401) return { statusCode, body: UNAUTHORIZED };
  if (statusCode === 413) {
    return { statusCode, body: { error: 'payload_too_large', message: `no endpoint takes a body; bodies over ${bodyLimit} bytes are refused` } };
  }
  if (statusCode >= 400 && statusCode < 500) return { statusCode, body: { error: statusCodeName(statusCode), message: describeError(err) } };
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
