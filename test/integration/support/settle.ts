import { depositTracker } from './chain-state.js';
import { runRound, type BridgeCrank } from './cranks.js';
import type { DevnetBridge } from './devnet-bridge.js';
import { deposit } from './transactions.js';

/** `count` deposits of the frozen pair: each is Rejected, so its transfer settles without a claim. */
export async function depositRejected(b: DevnetBridge, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await deposit(b, { amount: 100n + BigInt(i), sourceMint: b.world.tokenPairs.frozen.sourceMint });
}

/** Rounds until every transfer is cleaned up (Rejected results need no claim); at most `maxRounds`. Returns the rounds it took. */
export async function settleWithin(b: DevnetBridge, cranks: readonly BridgeCrank[], maxRounds: number): Promise<number> {
  for (let round = 1; round <= maxRounds; round++) {
    await runRound(cranks);
    const { header } = depositTracker(b);
    if (header.settledPrefix === header.entryCount) return round;
  }
  throw new Error(`transfers not settled after ${maxRounds} rounds`);
}
