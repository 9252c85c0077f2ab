import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeError } from '../../src/errors.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Bank } from '../bank/bank.js';
import { commitmentLevel, type BankView } from '../bank/commitment-banks.js';
import type { CallView, FaultDecision, Faults } from '../faults/faults.js';
import { RPC_ERRORS, RpcError } from './errors.js';
import type { Exchange, MethodContext, RpcMethod } from './method.js';
import { accountMethods } from './methods/accounts.js';
import { adminMethods } from './methods/admin.js';
import { clusterMethods } from './methods/cluster.js';
import { feeMethods } from './methods/fees.js';
import { historyMethods } from './methods/history.js';
import { transactionMethods } from './methods/transactions.js';
import { checkCommitment, checkMinContextSlot, paramList } from './params.js';
import { DevnetError } from '../devnet-error.js';

/**
 * JSON-RPC 2.0 over HTTP (single calls and batches) on 127.0.0.1, with fault injection applied
 * per call before the method runs. Only loopback is ever bound: the admin methods need no auth.
 */

export const BRIDGE_RPC_METHODS: Readonly<Record<string, RpcMethod>> = {
  ...accountMethods,
  ...clusterMethods,
  ...transactionMethods,
  ...historyMethods,
  ...feeMethods,
};

const MAX_BODY_BYTES = 1024 * 1024;
const LOOPBACK = '127.0.0.1';

export interface RpcServerOptions {
  bank: Bank;
  faults: Faults;
  /** 0 picks a free port. */
  port: number;
  /** Serve the devnet_* admin methods: faults and compute costs (default true). */
  adminMethods?: boolean;
  /** Names the chain in errors ("source", "target"). */
  chain: string;
}

export interface RpcServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

type HttpFault = { kind: 'http500' } | { kind: 'http429'; retryAfterSecs: number } | { kind: 'refused'; status: 401 | 403 | 404 };

export async function startRpcServer(options: RpcServerOptions): Promise<RpcServer> {
  const methods: Record<string, RpcMethod> = { ...BRIDGE_RPC_METHODS, ...(options.adminMethods === false ? {} : adminMethods) };
  const closing = new AbortController();
  const server = createServer((req, res) => {
    handleHttp(req, res).catch((err: unknown) => {
      if (!res.headersSent) writeJson(res, 500, response(null, new RpcError(RPC_ERRORS.INTERNAL_ERROR, `Internal error: ${describeError(err)}`)));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;

  async function handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET' && req.url === '/health') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
    const body = await readBody(req);
    if (body === undefined) return void res.writeHead(413, { connection: 'close' }).end();
    let request: unknown;
    try {
      request = JSON.parse(body);
    } catch {
      return writeJson(res, 200, response(null, new RpcError(RPC_ERRORS.PARSE_ERROR, 'Parse error')));
    }
    const exchange: Exchange = {};
    const calls = Array.isArray(request) ? request : [request];
    if (calls.length === 0) return writeJson(res, 200, response(null, new RpcError(RPC_ERRORS.INVALID_REQUEST, 'Invalid request')));
    const outcomes: Array<{ reply: JsonRpcResponse; httpFault?: HttpFault }> = [];
    for (const call of calls) outcomes.push(await handleCall(call, exchange));
    const httpFault = outcomes.find((outcome) => outcome.httpFault !== undefined)?.httpFault;
    if (httpFault !== undefined) return writeHttpFault(res, httpFault, outcomes[0]!.reply.id);
    if (exchange.lostResponse === 'destroy') return void req.socket.destroy();
    if (exchange.lostResponse === 'http500') return void res.writeHead(500, { 'content-type': 'text/plain' }).end('Internal Server Error');
    if (exchange.lostResponse === 'http504') return void res.writeHead(504, { 'content-type': 'text/plain' }).end('Gateway Timeout');
    const replies = outcomes.map((outcome) => outcome.reply);
    writeJson(res, 200, Array.isArray(request) ? replies : replies[0]);
  }

  async function handleCall(call: unknown, exchange: Exchange): Promise<{ reply: JsonRpcResponse; httpFault?: HttpFault }> {
    if (!isCall(call)) return { reply: response(null, new RpcError(RPC_ERRORS.INVALID_REQUEST, 'Invalid request')) };
    const id = call.id ?? null;
    const method = methods[call.method];
    if (method === undefined) return { reply: response(id, new RpcError(RPC_ERRORS.METHOD_NOT_FOUND, 'Method not found')) };
    const admin = call.method in adminMethods;
    if (!admin) {
      const refusedWith = options.faults.httpStatus;
      if (refusedWith !== null) return { reply: response(id), httpFault: { kind: 'refused', status: refusedWith } };
      const decision = options.faults.decide(call.method);
      if (decision.latencyMs > 0) await sleep(decision.latencyMs, undefined, { signal: closing.signal });
      const injected = injectedFault(decision, id);
      if (injected !== undefined) return injected;
    }
    // Admin calls see the chain as it is and draw nothing from the faults' seeded sequence.
    const view: CallView = admin ? { behindSlots: 0, pastOnly: false } : options.faults.nextCallView();
    const at = (config: Readonly<Record<string, unknown>>): BankView => {
      const bank = reportingView(options.bank.at(commitmentLevel(checkCommitment(config))), view);
      checkMinContextSlot(config, bank.slot);
      return bank;
    };
    const ctx: MethodContext = { bank: options.bank, faults: options.faults, exchange, at };
    try {
      return { reply: response(id, undefined, method(paramList(call.params), ctx)) };
    } catch (err) {
      if (err instanceof RpcError) return { reply: response(id, err) };
      return { reply: response(id, new RpcError(RPC_ERRORS.INTERNAL_ERROR, `Internal error: ${describeError(err)}`)) };
    }
  }

  const port = await listen(server, options.port, options.chain);
  return {
    url: `http://${LOOPBACK}:${port}`,
    port,
    close: () => closeServer(server, closing),
  };
}

/**
 * A commitment's bank as this call's answer sees it: with a slot lag or a frozen slot, its slot
 * and block height (and so context slots and minContextSlot checks) are behind, as are the
 * confirmed and finalized slots its statuses are judged by; a lagging backend (`pastOnly`) also
 * knows no transaction of the newer slots (statuses, history) nor their blockhashes, and serves
 * the account state of its slot (the copy kept at or before it). With `slotLag` alone the
 * account state is the bank's own.
 */
function reportingView(bank: BankView, { behindSlots: behind, pastOnly, pastAt }: CallView): BankView {
  if (behind === 0) return bank;
  const back = (slot: number) => Math.max(0, slot - behind);
  const shifted: BankView = {
    ...bank,
    slot: back(bank.slot),
    blockHeight: back(bank.blockHeight),
    confirmedSlot: back(bank.confirmedSlot),
    finalizedSlot: back(bank.finalizedSlot),
  };
  const past = pastOnly ? pastAt?.(shifted.slot) : undefined;
  if (past === undefined) return shifted;
  const viewSlot = past.slot;
  const seen = <T extends { slot: number }>(entry: T | undefined): T | undefined =>
    entry !== undefined && entry.slot <= viewSlot ? entry : undefined;
  return {
    ...shifted,
    slot: viewSlot,
    blockHeight: viewSlot,
    account: (address) => past.accounts.get(address),
    signatureStatus: (signature) => seen(bank.signatureStatus(signature)),
    transaction: (signature) => seen(bank.transaction(signature)),
    signaturesForAddress: (address, query) => bank.signaturesForAddress(address, query).filter((entry) => entry.slot <= viewSlot),
    latestBlockhash: (behindSlots = 0) => bank.latestBlockhash(behindSlots + bank.slot - viewSlot),
  };
}

function injectedFault(decision: FaultDecision, id: unknown): { reply: JsonRpcResponse; httpFault?: HttpFault } | undefined {
  switch (decision.fault) {
    case undefined:
      return undefined;
    case 'http500':
      return { reply: response(id), httpFault: { kind: 'http500' } };
    case 'http429':
      return { reply: response(id), httpFault: { kind: 'http429', retryAfterSecs: decision.retryAfterSecs } };
    case 'rpc':
      return { reply: response(id, new RpcError(RPC_ERRORS.NODE_UNHEALTHY, 'Node is behind by 42 slots', { numSlotsBehind: 42 })) };
  }
}

const REFUSAL_TEXT = { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' } as const;

function writeHttpFault(res: ServerResponse, fault: HttpFault, id: unknown): void {
  if (fault.kind === 'http500') return void res.writeHead(500, { 'content-type': 'text/plain' }).end('Internal Server Error');
  if (fault.kind === 'refused')
    return void res.writeHead(fault.status, { 'content-type': 'text/plain' }).end(`${fault.status} ${REFUSAL_TEXT[fault.status]}`);
  const error = { code: 429, message: 'Too many requests for a specific RPC call' };
  res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(fault.retryAfterSecs) });
  res.end(JSON.stringify({ jsonrpc: '2.0', error, id }));
}

function isCall(value: unknown): value is { jsonrpc: '2.0'; method: string; params?: unknown; id?: unknown } {
  if (typeof value !== 'object' || value === null) return false;
  const call = value as Record<string, unknown>;
  return call['jsonrpc'] === '2.0' && typeof call['method'] === 'string';
}

function response(id: unknown, error?: RpcError, result?: unknown): JsonRpcResponse {
  return error === undefined ? { jsonrpc: '2.0', result, id } : { jsonrpc: '2.0', error: error.toJSON(), id };
}

function writeJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function listen(server: Server, port: number, chain: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(
        new DevnetError(
          'DEVNET__FAILED_TO_LISTEN',
          { chain, port, reason: err.code ?? err.message },
          `devnet ${chain} chain cannot listen on ${LOOPBACK}:${port}: ${err.message}; pick another port or stop what uses it`,
        ),
      );
    });
    server.listen(port, LOOPBACK, () => resolve((server.address() as AddressInfo).port));
  });
}

function closeServer(server: Server, closing: AbortController): Promise<void> {
  closing.abort(new Error('devnet node closed'));
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
