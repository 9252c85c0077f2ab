import { describe, expect, it } from 'vitest';
import { BRIDGE_ERROR_CODES, BridgeError } from '../../src/errors.js';
import { BRIDGE_ERROR_ANSWERS, errorResponse } from '../../src/http/errors.js';

const INTERNAL = {
  statusCode: 500,
  body: { error: 'internal_error', message: 'internal error; the server log has the details under request id req-7' },
};

describe('the HTTP answer of each error', () => {
  it('every BridgeErrorCode has a row, a status or an internal reason, and every row is a code', () => {
    expect(Object.keys(BRIDGE_ERROR_ANSWERS).sort()).toEqual([...BRIDGE_ERROR_CODES].sort());
    const problems = Object.entries(BRIDGE_ERROR_ANSWERS).flatMap(([code, answer]) => {
      if ('internal' in answer) return answer.internal.length > 10 ? [] : [`${code}: an internal answer without its reason`];
      const { statusCode, error } = answer;
      return statusCode >= 400 && statusCode <= 599 && statusCode !== 500 && /^[a-z]+(_[a-z]+)*$/.test(error)
        ? []
        : [`${code}: ${statusCode} ${error}`];
    });
    expect(problems).toEqual([]);
  });

  it('a code a route cannot raise but by a bug is a 500 that names the request id, never the message', () => {
    const signer = new BridgeError('SIGNER__UNAVAILABLE', { reason: 'sign_failed' }, { signer: 'PKCS#11', detail: 'the token refused to sign' });
    expect(errorResponse(signer, 'req-7', 1024)).toEqual(INTERNAL);
  });

  it('rpc_unavailable says what could not be read, with Retry-After', () => {
    const rpc = new BridgeError(
      'CHAIN__RPC_FAILED',
      { chain: 'source', method: 'getAccountInfo', kind: 'timeout' },
      { what: 'getAccountInfo', reason: 'timed out' },
    );
    expect(errorResponse(rpc, 'req-7', 1024)).toEqual({
      statusCode: 503,
      headers: { 'retry-after': '5' },
      body: { error: 'rpc_unavailable', message: `the chain could not be read: ${rpc.message}` },
    });
  });

  it("fastify's own errors keep their status; anything else is a 500", () => {
    const mediaType = Object.assign(new Error('Unsupported Media Type: text/x'), { statusCode: 415 });
    expect(errorResponse(mediaType, 'req-7', 1024)).toEqual({
      statusCode: 415,
      body: { error: 'unsupported_media_type', message: 'Unsupported Media Type: text/x' },
    });
    expect(errorResponse(Object.assign(new Error('too large'), { statusCode: 413 }), 'req-7', 1024).body).toEqual({
      error: 'payload_too_large',
      message: 'no endpoint takes a body; bodies over 1024 bytes are refused',
    });
    expect(errorResponse(new TypeError('x is undefined'), 'req-7', 1024)).toEqual(INTERNAL);
  });
});
