import { randomUUID } from 'node:crypto';
import { SolanaJSONRPCError } from '@solana/web3.js';
import type { RpcFetch } from './rpc-fetch.js';

/**
 * A plain JSON-RPC 2.0 call over the metered fetch, for what web3.js's Connection hides: its
 * sendRawTransaction turns a preflight refusal into a SendTransactionError that keeps the logs
 * but drops `data.err`, the InstructionError that names the program error. A JSON-RPC error
 * is thrown as web3.js's own SolanaJSONRPCError (code, message, data) so that one classifier
 * handles errors from both paths.
 */

export async function jsonRpcCall(
  fetch: RpcFetch,
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
