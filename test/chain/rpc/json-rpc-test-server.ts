import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A JSON-RPC server on 127.0.0.1 whose every answer a test scripts: a result, a JSON-RPC
 * error, an HTTP status, a raw body, a response that never comes, or a dropped connection.
 */

export type Reply =
  | { result: unknown }
  | { error: { code: number; message: string; data?: unknown } }
  | { http: number; body?: string; headers?: Record<string, string> }
  | { raw: string }
  | { hang: true }
  | { drop: true };

/** What a node without transaction history answers a history read (JSON-RPC -32011). */
export const NO_HISTORY_REPLY: Reply = { error: { code: -32011, message: 'Transaction history is not available from this node' } };

export interface RpcCall {
  method: string;
  params: unknown[];
}

export type Handler = (call: RpcCall) => Reply | Promise<Reply>;

export interface JsonRpcTestServer {
  url: string;
  calls: RpcCall[];
  /** Requests whose response is still held (`hang`), released at close. */
  readonly hanging: number;
  close(): Promise<void>;
}

export async function startJsonRpcServer(handler: Handler): Promise<JsonRpcTestServer> {
  const calls: RpcCall[] = [];
  const held = new Set<ServerResponse>();

  async function respond(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readBody(request);
    const message = JSON.parse(body) as { id: unknown; method: string; params?: unknown[] };
    const call = { method: message.method, params: message.params ?? [] };
    calls.push(call);
    const reply = await handler(call);
    if ('hang' in reply) {
      held.add(response);
      response.on('close', () => held.delete(response));
      return;
    }
    if ('drop' in reply) {
      request.socket.destroy();
      return;
    }
    if ('http' in reply) {
      response.writeHead(reply.http, reply.headers ?? {}).end(reply.body ?? '');
      return;
    }
    const text = 'raw' in reply ? reply.raw : JSON.stringify({ jsonrpc: '2.0', id: message.id, ...reply });
    response.writeHead(200, { 'content-type': 'application/json' }).end(text);
  }

  const server = createServer((request, response) => {
    respond(request, response).catch((err: unknown) => {
      response.writeHead(500).end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/`,
    calls,
    get hanging() {
      return held.size;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err === undefined ? resolve() : reject(err)));
      }),
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}
