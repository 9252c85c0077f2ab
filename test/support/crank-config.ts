import type { World } from '../../devnet/index.js';
import { serverEnv } from '../../devnet/server-env.js';
import { parseConfig, type CrankConfig } from '../../src/config/config.js';

/**
 * Authority k's crank configuration on a devnet world, read by the server's own parseConfig from
 * the environment the devnet gives a server (devnet/server-env.ts: no handoff), so that every
 * setting a test does not name is the production default. No fee warning: the worlds fund their
 * authorities for the run, not for a day. `overrides` are the test's own values.
 */
export function devnetCrankConfig(world: World, k: number, overrides: Partial<CrankConfig> = {}): CrankConfig {
  const { crank } = parseConfig(serverEnv(world, k, 0)).config;
  if (crank === undefined) throw new Error('devnet/server-env.ts no longer sets the runtime variables');
  return { ...crank, minBalanceLamports: 0, ...overrides };
}
