import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { statusCodeName } from './errors.js';

/**
 * Requests Node's parser refuses before fastify sees them (headers not complete within
 * HEADERS_TIMEOUT_MS, headers too large, bytes that are not HTTP): answered on the socket in the
 * project's error shape, with the headers every answer carries, then the socket is closed.
 */

interface ClientError {
  status: number;
  message: string;
}

function clientError(code: string | undefined, headersTimeoutMs: number): ClientError {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, message: `the request headers did not arrive whole within ${headersTimeoutMs} ms; the connection is closed` };
  }
  if (code === 'HPE_HEADER_OVERFLOW')
    return { status: 431, message: `the request headers are larger than the server accepts (${maxHeaderSize} bytes)` };
  return { status: 400, message: 'the request is not valid HTTP/1.1; the connection is closed' };
}

export function answerClientError(headers: Readonly<Record<string, string>>, headersTimeoutMs: number) {
  return (err: Error & { code?: string }, socket: Socket): void => {
    // A reset connection has nobody left to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const { status, message } = clientError(err.code, headersTimeoutMs);
    const body = JSON.stringify({ error: statusCodeName(status), message });
    const lines = [
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
      'connection: close',
      'content-type: application/json; charset=utf-8',
      `content-length: ${Buffer.byteLength(body)}`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ];
    if (socket.writable) socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
    socket.destroy();
  };
}
