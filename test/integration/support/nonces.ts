import { initNoncePools } from '../../support/authority.js';
import type { DevnetBridge } from './devnet-bridge.js';

/** `npm run ops -- nonce init` for each authority slot (test/support/authority.ts): its nonce pools on both chains. */
export async function initNonces(b: DevnetBridge, slots: readonly number[]): Promise<void> {
  for (const slot of slots) await initNoncePools(b.world, slot, b.authorities[slot]!, AbortSignal.timeout(30_000));
}
