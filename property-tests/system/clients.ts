import { Connection, type Keypair } from '@solana/web3.js';
import { assembleBridgeChains, type CrankParts } from '../../src/assemble-crank.js';
import type { BridgeChains } from '../../src/chain/port/bridge-chains.js';
import type { SubmitTiming } from '../../src/chain/client/submit/transaction-sender.js';
import type { World } from '../../devnet/index.js';
import type { CrankConfig } from '../../src/config/config.js';
import { authorityParts as harnessParts, initNoncePools } from '../../test/support/authority.js';
import type { Logger } from '../../src/log/logger.js';
import type { Metrics } from '../../src/metrics/metrics.js';
import type { RpcFetch } from '../../src/chain/rpc/rpc-fetch.js';

/**
 * The project's real chain client for one authority key, assembled as the server assembles it
 * (src/assemble-crank.ts), tuned so that a property run stays fast: confirmation is polled every
 * few milliseconds and an unknown outcome is given up on (left pending, resolved by the next
 * call) after a fraction of a second.
 */

/** Per request. Far above the devnet's answer time, so only an injected latency makes a call time out. */
export const RPC_TIMEOUT_MS = 1_000;

const SUBMIT_TIMING: SubmitTiming = { pollIntervalMs: 3, rebroadcastIntervalMs: 15, confirmTimeoutMs: 300 };

/**
 * Authority `slot`'s parts as the server assembles them: the default configuration with the
 * run's RPC timeout (and `config`'s values), its key, the run's fast confirmation timing.
 */
export function authorityParts(world: World, slot: number, keypair: Keypair, metrics: Metrics, options: AuthorityPartsOptions = {}): CrankParts {
  return harnessParts(world, slot, keypair, {
    config: { rpcTimeoutMs: RPC_TIMEOUT_MS, ...options.config },
    metrics,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    tuning: { submitTiming: SUBMIT_TIMING, ...(options.fetch === undefined ? {} : { fetch: options.fetch }) },
  });
}

interface AuthorityPartsOptions {
  config?: Partial<CrankConfig>;
  logger?: Logger;
  /** How the crank reaches its chains: the honest cranks' lying endpoints (liars.ts). */
  fetch?: RpcFetch;
}

/** The authority's nonce accounts on both chains, as `npm run ops -- nonce init` creates them. */
export async function initNonces(world: World, slot: number, keypair: Keypair): Promise<void> {
  await initNoncePools(world, slot, keypair, AbortSignal.timeout(NONCE_INIT_TIMEOUT_MS), { rpcTimeoutMs: RPC_TIMEOUT_MS });
}

/** A few confirmed transactions on the local devnet; this only bounds a hung one. */
const NONCE_INIT_TIMEOUT_MS = 20_000;

export function authorityChains(world: World, slot: number, keypair: Keypair, metrics: Metrics): BridgeChains {
  return assembleBridgeChains(authorityParts(world, slot, keypair, metrics));
}

/** What users and governance send through: an unmodified web3.js Connection, as their wallets would. */
export function userConnection(url: string): Connection {
  return new Connection(url, { commitment: 'confirmed', disableRetryOnRateLimit: true });
}
