import type { PublicKey } from '@solana/web3.js';
import type { ChainSide } from '../../domain.js';
import type { AuthoritySigner } from '../../signer/authority-signer.js';
import type { ChainRpc } from '../rpc/chain-rpc.js';
import type { AddressSignature } from '../rpc/rpc-answers.js';
import { chainEndpoints, type ChainEndpointsOptions } from './chain-endpoints.js';
import { readTransferRange, type TransferRange } from './read/read-transfers.js';
import { planNoncePool, setUpNoncePool, type NoncePoolPlan, type NoncePoolSetup } from './submit/nonce-setup.js';

/**
 * What the operator does on both chains without the crank (GET /transfers, `npm run ops`):
 * reads that involve no key, and the nonce pool's set-up, which the operator's signer signs.
 * Each call reaches the chains over ./chain-endpoints.ts; no key stays in these closures.
 */

/** Most signatures `npm run ops escalate` asks each chain for. */
const MAX_RECENT_SIGNATURES = 100;

/** Read-only reads for operators (GET /transfers, `npm run ops`): no key involved. */
export interface OperatorReads {
  readRange(from: number, limit: number, signal: AbortSignal): Promise<TransferRange>;
  /** The newest transactions naming `address` on each chain, at most MAX_RECENT_SIGNATURES each. */
  recentSignatures(address: PublicKey, limit: number, signal: AbortSignal): Promise<Record<ChainSide, AddressSignature[]>>;
}

export function createOperatorReads(options: ChainEndpointsOptions): OperatorReads {
  const endpoints = chainEndpoints(options);
  return {
    readRange: (from, limit, signal) => readTransferRange({ ...endpoints, metrics: options.metrics }, from, limit, signal),
    recentSignatures: async (address, limit, signal) => {
      const bounded = Math.max(1, Math.min(limit, MAX_RECENT_SIGNATURES));
      const [source, target] = await Promise.all([
        endpoints.source.rpc.getSignaturesForAddress(address, { limit: bounded }, signal),
        endpoints.target.rpc.getSignaturesForAddress(address, { limit: bounded }, signal),
      ]);
      return { source, target };
    },
  };
}

/** `npm run ops -- nonce init`: the authority's nonce pool on both chains, planned from reads, then set up, the source first (./submit/nonce-setup.ts). */
export interface NoncePools {
  plan(authority: PublicKey, size: number, signal: AbortSignal): Promise<NoncePoolPlan[]>;
  setUp(signer: AuthoritySigner, plans: readonly NoncePoolPlan[], signal: AbortSignal): Promise<NoncePoolSetup[]>;
}

export function createNoncePools(options: ChainEndpointsOptions): NoncePools {
  const { source, target } = chainEndpoints(options);
  const rpcOf = (chain: ChainSide): ChainRpc => (chain === 'source' ? source : target).rpc;
  return {
    plan: async (authority, size, signal) => [
      await planNoncePool({ rpc: source.rpc, authority, chainId: options.sourceChainId, size }, signal),
      await planNoncePool({ rpc: target.rpc, authority, chainId: options.targetChainId, size }, signal),
    ],
    setUp: async (signer, plans, signal) => {
      const done: NoncePoolSetup[] = [];
      for (const plan of plans) done.push(await setUpNoncePool(rpcOf(plan.chain), signer, plan, signal));
      return done;
    },
  };
}

/** Planned and set up at once, without the CLI's checks and question: the tests' and benches' `nonce init`. */
export async function setUpNoncePools(
  options: ChainEndpointsOptions,
  signer: AuthoritySigner,
  size: number,
  signal: AbortSignal,
): Promise<NoncePoolSetup[]> {
  const pools = createNoncePools(options);
  return pools.setUp(signer, await pools.plan(signer.publicKey, size, signal), signal);
}
