import type { PublicKey } from '@solana/web3.js';
import type { ChainSide } from '../../domain.js';
import { minContext, type PoolReads } from './pool-reads.js';
import { jsonRpcCall } from './rpc-failure.js';
import type { RpcMethod } from './rpc-methods.js';
import { computeUnitsOf, signaturesOf, type AddressSignature, type TransactionSignatures } from './rpc-answers.js';

/**
 * The history reads of one chain's ChainRpc (./chain-rpc.ts): what landed transactions list an
 * address, and what one landed transaction's signatures and compute were. Each goes only to
 * endpoints that keep transaction history (./pool-reads.ts `historyRead`, ./endpoint-history.ts)
 * and fails with `isHistoryUnavailable` when none does; each is read at confirmed.
 */

interface AddressSignatureOptions {
  /** 1..1000. */
  limit: number;
  /** Only older than this signature. */
  before?: string;
  /** Only newer than this signature. */
  until?: string;
  /** The node must have processed at least this slot (JSON-RPC -32016 otherwise, retryable). */
  minContextSlot?: number;
}

export interface HistoryReads {
  /**
   * Landed transactions that list `address`, newest first, at confirmed. A history read: it
   * goes only to endpoints that keep history and fails with `isHistoryUnavailable` when none does.
   */
  getSignaturesForAddress(address: PublicKey, options: AddressSignatureOptions, signal: AbortSignal): Promise<AddressSignature[]>;
  /**
   * A landed transaction's message bytes and each required signer's key and signature
   * (getTransaction, base64), as the node sent them: nothing is verified here. Null when the
   * node does not have it. A history read.
   */
  getTransactionSignatures(signature: string, signal: AbortSignal): Promise<TransactionSignatures | null>;
  /**
   * What a landed transaction consumed (getTransaction `meta.computeUnitsConsumed`), as the node
   * says it: null when the node does not have the transaction or reports no count. A history read.
   */
  getTransactionComputeUnits(signature: string, signal: AbortSignal): Promise<number | null>;
}

const TRANSACTION_CONFIG = { encoding: 'base64', commitment: 'confirmed', maxSupportedTransactionVersion: 0 };

export function createHistoryReads(chain: ChainSide, historyRead: PoolReads<RpcMethod>['historyRead']): HistoryReads {
  return {
    getSignaturesForAddress: (address, { minContextSlot, ...options }, signal) =>
      historyRead(
        'getSignaturesForAddress',
        'confirmed',
        signal,
        async ({ connection }, floor) =>
          (await connection.getSignaturesForAddress(address, { ...options, ...minContext(floor) }, 'confirmed')).map(
            ({ signature, slot, err, blockTime }) => ({
              signature,
              slot,
              err,
              blockTime: blockTime ?? null,
            }),
          ),
        minContextSlot,
      ),

    getTransactionSignatures: (signature, signal) =>
      historyRead('getTransaction', 'confirmed', signal, async ({ rpcFetch, url }) => {
        const result = await jsonRpcCall(rpcFetch, url, 'getTransaction', [signature, TRANSACTION_CONFIG], signal);
        return result === null ? null : signaturesOf(chain, result);
      }),

    getTransactionComputeUnits: (signature, signal) =>
      historyRead('getTransaction', 'confirmed', signal, async ({ rpcFetch, url }) =>
        computeUnitsOf(chain, await jsonRpcCall(rpcFetch, url, 'getTransaction', [signature, TRANSACTION_CONFIG], signal)),
      ),
  };
}
