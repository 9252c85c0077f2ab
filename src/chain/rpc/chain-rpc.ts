import {
  Connection,
  type BlockhashWithExpiryBlockHeight,
  type ConfirmedSignatureInfo,
  type Commitment,
  type PublicKey,
  type SignatureStatus,
} from '@solana/web3.js';
import type { ChainSide, Metrics } from '../../metrics/metrics.js';
import { jsonRpcCall } from './json-rpc.js';
import { classifyRpcError, rpcFailure } from './rpc-failure.js';
import { createRpcFetch, withCallSignal, type RpcFetch } from './rpc-fetch.js';

/**
 * The RPC methods the chain client uses on one chain, each with an AbortSignal and every
 * failure as CHAIN__RPC_FAILED (or the signal's reason once aborted).
 *
 * Reads go through web3.js's Connection (typed, validated responses). sendTransaction is a
 * plain JSON-RPC call (see ./json-rpc.ts). Nothing here opens a websocket: the Connection
 * creates its websocket client lazily, for subscriptions and confirmTransaction, which this
 * server never uses; confirmation polls getSignatureStatuses instead. With
 * `disableRetryOnRateLimit` web3.js never enters its 429 loop, the only place its HTTP path
 * writes to the console, so web3.js prints nothing and the global console stays untouched.
 */

export interface AccountSnapshot {
  /** The slot at which the node answered. */
  slot: number;
  /** null when the account does not exist. */
  account: { owner: PublicKey; lamports: number; data: Uint8Array } | null;
}

export interface GetAccountOptions {
  commitment: Commitment;
  dataSlice?: { offset: number; length: number };
  /** The node must have processed at least this slot (JSON-RPC -32016 otherwise, retryable). */
  minContextSlot?: number;
}

export interface SendOptions {
  skipPreflight: boolean;
  preflightCommitment: Commitment;
}

export interface ChainRpc {
  readonly chain: ChainSide;
  getAccountInfo(address: PublicKey, options: GetAccountOptions, signal: AbortSignal): Promise<AccountSnapshot>;
  getBalance(address: PublicKey, commitment: Commitment, signal: AbortSignal): Promise<number>;
  getLatestBlockhash(commitment: Commitment, signal: AbortSignal): Promise<BlockhashWithExpiryBlockHeight>;
  getBlockHeight(commitment: Commitment, signal: AbortSignal): Promise<number>;
  /** One signature's status; null when the node knows nothing of it. */
  getSignatureStatus(
    signature: string,
    options: { searchTransactionHistory: boolean },
    signal: AbortSignal,
  ): Promise<SignatureStatus | null>;
  /** Sends signed wire bytes (base64, maxRetries 0); resolves with the signature the node reports. */
  sendTransaction(wire: Uint8Array, options: SendOptions, signal: AbortSignal): Promise<string>;
  /** The newest `limit` transactions that name `address`, newest first (operator reads only). */
  getSignaturesForAddress(address: PublicKey, limit: number, signal: AbortSignal): Promise<ConfirmedSignatureInfo[]>;
}

export interface ChainRpcOptions {
  chain: ChainSide;
  url: string;
  timeoutMs: number;
  metrics: Metrics;
  /** The underlying fetch; globalThis.fetch unless a test injects one. */
  fetch?: RpcFetch;
}

export function createChainRpc(options: ChainRpcOptions): ChainRpc {
  const { chain, url } = options;
  const rpcFetch = createRpcFetch(options);
  const connection = new Connection(url, {
    commitment: 'confirmed',
    fetch: rpcFetch,
    disableRetryOnRateLimit: true,
    // Keep web3.js from building an agentkeepalive agent that globalThis.fetch would ignore.
    httpAgent: false,
  });

  async function call<T>(method: string, signal: AbortSignal, run: () => Promise<T>): Promise<T> {
    signal.throwIfAborted();
    try {
      return await withCallSignal(signal, run);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      throw classifyRpcError(chain, method, err);
    }
  }

  return {
    chain,

    getAccountInfo: (address, { commitment, dataSlice, minContextSlot }, signal) =>
      call('getAccountInfo', signal, async () => {
        const { context, value } = await connection.getAccountInfoAndContext(address, {
          commitment,
          ...(dataSlice === undefined ? {} : { dataSlice }),
          ...(minContextSlot === undefined ? {} : { minContextSlot }),
        });
        const account = value === null ? null : { owner: value.owner, lamports: value.lamports, data: value.data };
        return { slot: context.slot, account };
      }),

    getBalance: (address, commitment, signal) =>
      call('getBalance', signal, async () => (await connection.getBalanceAndContext(address, { commitment })).value),

    getLatestBlockhash: (commitment, signal) =>
      call('getLatestBlockhash', signal, async () => (await connection.getLatestBlockhashAndContext({ commitment })).value),

    getBlockHeight: (commitment, signal) => call('getBlockHeight', signal, () => connection.getBlockHeight({ commitment })),

    getSignatureStatus: (signature, { searchTransactionHistory }, signal) =>
      call('getSignatureStatuses', signal, async () => {
        const { value } = await connection.getSignatureStatuses([signature], { searchTransactionHistory });
        return value[0] ?? null;
      }),

    sendTransaction: (wire, { skipPreflight, preflightCommitment }, signal) =>
      call('sendTransaction', signal, async () => {
        const config = { encoding: 'base64', skipPreflight, preflightCommitment, maxRetries: 0 };
        const params = [Buffer.from(wire).toString('base64'), config];
        const result = await jsonRpcCall(rpcFetch, url, 'sendTransaction', params, signal);
        if (typeof result !== 'string') {
          const reason = `the result is not a signature string: ${JSON.stringify(result)}`;
          throw rpcFailure(chain, 'sendTransaction', { retryable: true, reason });
        }
        return result;
      }),

    getSignaturesForAddress: (address, limit, signal) =>
      call('getSignaturesForAddress', signal, () => connection.getSignaturesForAddress(address, { limit }, 'confirmed')),
  };
}
