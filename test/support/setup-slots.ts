import type { ChainPair } from '../../devnet/chain-pair.js';

/**
 * A world's set-up is no test's subject: while `setup` runs, a slot also ends every
 * SETUP_SLOT_MS on both chains, so its wait for the finalized banks (32 slots) costs tens of
 * milliseconds, not 32 of the test's slots (0.64 s at the suite's 20 ms, 12.8 s at 400 ms). The
 * test's own slot interval governs from its first step on.
 */
const SETUP_SLOT_MS = 2;

export async function inSetupSlots<T>(pair: ChainPair, setup: () => Promise<T>): Promise<T> {
  const slots = setInterval(() => {
    pair.source.advanceSlots(1);
    pair.target.advanceSlots(1);
  }, SETUP_SLOT_MS);
  try {
    return await setup();
  } finally {
    clearInterval(slots);
  }
}
