import bs58 from 'bs58';
import type { DevnetNode } from '../../../devnet/node.js';
import type { ErrorShape, Outcome } from './outcome.js';

/**
 * The devnet as a client sees it: its JSON-RPC over loopback. A transaction is simulated, then
 * sent with preflight (what the node answers a sender: a signature, or -32002 with the error,
 * or -32003, -32602), then sent again with `skipPreflight`, which hands the bytes to the bank as
 * a leader would (a duplicate of one that already landed is dropped), so that what lands can be
 * compared with LiteSVM's bank. One JSON-RPC batch per send: the node answers its calls in order.
 */

interface RpcAnswer {
  result?: unknown;
  error?: { code: number; message: string; data?: { err?: unknown } };
}

type Status = { err: unknown } | null;

/** getTransaction's meta: what the node says a landed transaction paid and consumed. */
export interface Recorded {
  fee: bigint;
  unitsConsumed: number;
}

const RPC_TIMEOUT_MS = 5_000;

export class DevnetRuntime {
  constructor(readonly node: DevnetNode) {}

  async latestBlockhash(): Promise<{ blockhash: string; lastValidBlockHeight: number }> {
    const [answer] = await this.#batch([['getLatestBlockhash', [{ commitment: 'processed' }]]]);
    return (resultOf(answer, 'getLatestBlockhash') as { value: { blockhash: string; lastValidBlockHeight: number } }).value;
  }

  /** An account's data as getAccountInfo answers it (undefined: no account). */
  async accountData(key: string): Promise<Uint8Array | undefined> {
    const [answer] = await this.#batch([['getAccountInfo', [key, { encoding: 'base64', commitment: 'processed' }]]]);
    const { value } = resultOf(answer, 'getAccountInfo') as { value: { data: [string, 'base64'] } | null };
    return value === null ? undefined : Uint8Array.from(Buffer.from(value.data[0], 'base64'));
  }

  /** The outcome, and what the node's getTransaction recorded of a transaction that landed. */
  async run(wire: Uint8Array, accounts: readonly string[]): Promise<Outcome & { recorded: Recorded | null }> {
    const id = bs58.encode(wire.subarray(1, 65));
    const encoded = Buffer.from(wire).toString('base64');
    const [balancesBefore, statusBefore, simulation, preflight, , statusAfter, balancesAfter, transaction] = await this.#batch([
      ['getMultipleAccounts', [accounts, { encoding: 'base64', commitment: 'processed' }]],
      ['getSignatureStatuses', [[id]]],
      ['simulateTransaction', [encoded, { encoding: 'base64', sigVerify: true, commitment: 'processed' }]],
      ['sendTransaction', [encoded, { encoding: 'base64' }]],
      ['sendTransaction', [encoded, { encoding: 'base64', skipPreflight: true }]],
      ['getSignatureStatuses', [[id]]],
      ['getMultipleAccounts', [accounts, { encoding: 'base64', commitment: 'processed' }]],
      ['getTransaction', [id, { encoding: 'base64', commitment: 'confirmed', maxSupportedTransactionVersion: 0 }]],
    ]);
    const before = balancesOf(balancesBefore!);
    const after = balancesOf(balancesAfter!);
    const lamports = (balances: ReadonlyArray<bigint | null>) => balances.reduce<bigint>((total, value) => total + (value ?? 0n), 0n);
    const status = statusOf(statusAfter!);
    const landed = statusOf(statusBefore!) === null && status !== null;
    return {
      landed,
      error: landed ? (status.err === null ? null : { err: status.err }) : refusal(preflight!),
      fee: lamports(before) - lamports(after),
      unitsConsumed: unitsOf(simulation!),
      balances: Object.fromEntries(accounts.map((key, i) => [key, after[i]!])),
      recorded: landed ? recordedOf(transaction!) : null,
    };
  }

  async #batch(calls: Array<[string, unknown[]]>): Promise<RpcAnswer[]> {
    const response = await fetch(this.node.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(calls.map(([method, params], id) => ({ jsonrpc: '2.0', id, method, params }))),
      signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
    });
    if (!response.ok) throw new Error(`devnet batch ${calls.map(([method]) => method).join(', ')}: HTTP ${response.status}`);
    return (await response.json()) as RpcAnswer[];
  }
}

function resultOf(answer: RpcAnswer | undefined, method: string): unknown {
  if (answer?.error !== undefined || answer === undefined) throw new Error(`devnet ${method} answered ${JSON.stringify(answer?.error)}`);
  return answer.result;
}

function balancesOf(answer: RpcAnswer): Array<bigint | null> {
  const { value } = resultOf(answer, 'getMultipleAccounts') as { value: Array<{ lamports: number } | null> };
  return value.map((account) => (account === null ? null : BigInt(account.lamports)));
}

function recordedOf(answer: RpcAnswer): Recorded {
  const { meta } = resultOf(answer, 'getTransaction') as { meta: { fee: number; computeUnitsConsumed: number } };
  return { fee: BigInt(meta.fee), unitsConsumed: meta.computeUnitsConsumed };
}

function statusOf(answer: RpcAnswer): Status {
  const { value } = resultOf(answer, 'getSignatureStatuses') as { value: Status[] };
  return value[0]!;
}

/** What the sender was told: -32002 carries the bank's error; other codes are refusals before it. */
function refusal(preflight: RpcAnswer): ErrorShape {
  if (preflight.error === undefined) return null;
  if (preflight.error.data?.err !== undefined) return { err: preflight.error.data.err };
  return { rpcError: preflight.error.code };
}

function unitsOf(simulation: RpcAnswer): number {
  const value = (simulation.result as { value?: { unitsConsumed?: number } } | undefined)?.value;
  return value?.unitsConsumed ?? 0;
}
