import { expect } from 'vitest';
import { depositTracker, nextIndexOf, withdrawTracker } from './chain-state.js';
import { banksCaughtUp, runRound, type BridgeCrank } from './cranks.js';
import type { DevnetBridge } from './devnet-bridge.js';
import { expectSettled, expectTransactionsAccounted } from './expectations.js';
import { deposit } from './transactions.js';

/** `count` deposits of the frozen pair, all in the finalized banks on return: each is Rejected, so its transfer settles without a claim. */
export async function depositRejected(b: DevnetBridge, count: number): Promise<void> {
  // One at a time, so entry i holds amount 100 + i; one wait for finality at the end, not one each.
  for (let i = 0; i < count; i++) await deposit(b, { amount: 100n + BigInt(i), sourceMint: b.world.tokenPairs.frozen.sourceMint }, 'confirmed');
  await banksCaughtUp(b);
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

/** `rounds` rounds, then `count` transfers settled, every crank's position past them, and every transaction accounted for. */
export async function settleAfterRounds(b: DevnetBridge, cranks: readonly BridgeCrank[], count: number, rounds = 4): Promise<void> {
  for (let round = 0; round < rounds; round++) await runRound(cranks);
  expectSettled(b, count);
  for (const crank of cranks) expect(nextIndexOf(withdrawTracker(b), b, crank.slot)).toBe(count);
  await expectTransactionsAccounted(b, cranks);
}
