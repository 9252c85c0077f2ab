import type { Keypair } from '@solana/web3.js';
import { Registry } from 'prom-client';
import type { World } from '../../devnet/index.js';
import type { CrankParts } from '../../src/assemble-crank.js';
import { FileKeySigner } from '../../src/signer/file-key-signer.js';
import { endpointsOptions } from '../../src/chain/client/chain-endpoints.js';
import { setUpNoncePools } from '../../src/chain/client/operator-chains.js';
import type { CrankConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/log/logger.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { devnetCrankConfig } from './crank-config.js';

/**
 * One authority on a devnet world, as the tests (test/integration/support/cranks.ts), the benches
 * (bench/support/) and the property model (property-tests/system/) all set it up: its crank's
 * parts as the server assembles them, and its nonce pools as `npm run ops -- nonce init` creates
 * them. Each is written here once.
 */

export interface AuthorityOptions extends Partial<Omit<CrankParts, 'config'>> {
  /** The caller's settings over the devnet defaults (devnetCrankConfig). */
  config?: Partial<CrankConfig>;
}

/** Authority `slot`'s parts: the devnet configuration with `config` over it, its key as a file signer unless `signer` is given. */
export function authorityParts(
  world: World,
  slot: number,
  key: Keypair,
  { config, signer, logger, metrics, tuning }: AuthorityOptions = {},
): CrankParts {
  return {
    config: devnetCrankConfig(world, slot, config),
    signer: signer ?? new FileKeySigner(key),
    logger: logger ?? createLogger({ level: 'silent' }),
    metrics: metrics ?? createMetrics(new Registry()),
    ...(tuning === undefined ? {} : { tuning }),
  };
}

/** Authority `slot`'s nonce pools on both chains, through the same loader as `npm run ops -- nonce init`. */
export async function initNoncePools(world: World, slot: number, key: Keypair, signal: AbortSignal, config?: Partial<CrankConfig>): Promise<void> {
  const parts = authorityParts(world, slot, key, config === undefined ? {} : { config });
  await setUpNoncePools(endpointsOptions(parts.config, parts.metrics), parts.signer, parts.config.nonceAccounts, signal);
}
