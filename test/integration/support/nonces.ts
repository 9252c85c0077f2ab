import { Registry } from 'prom-client';
import { FileKeySigner } from '../../../src/signer/file-key-signer.js';
import { endpointsOptions, setUpNoncePools } from '../../../src/chain/client/index.js';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { devnetCrankConfig } from '../../support/crank-config.js';
import type { DevnetBridge } from './devnet-bridge.js';

/** `npm run ops -- nonce init` for each authority slot, through the same loader: its nonce pools on both chains. */
export async function initNonces(b: DevnetBridge, slots: readonly number[]): Promise<void> {
  for (const slot of slots) {
    const config = devnetCrankConfig(b.world, slot);
    await setUpNoncePools(endpointsOptions(config, createMetrics(new Registry())), new FileKeySigner(b.authorities[slot]!), config.nonceAccounts, AbortSignal.timeout(30_000));
  }
}
