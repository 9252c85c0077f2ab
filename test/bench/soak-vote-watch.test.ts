import { afterEach, describe, expect, it } from 'vitest';
import { watchVotes } from '../../bench/soak/vote-watch.js';
import { depositTracker } from '../integration/support/chain-state.js';
import { startDevnetBridge, type DevnetBridge } from '../integration/support/devnet-bridge.js';
import { deposit, rawAckDeposit, setTokenPair } from '../integration/support/transactions.js';

/** The soak's duplicate-vote check on a real devnet: a vote signed and landed twice is counted. */

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

/** A devnet with one deposit, the watch started, and authority 0's honest vote on it. */
async function oneDeposit() {
  const started = await startDevnetBridge();
  bridge = started;
  const mint = started.world.tokenPairs.normal.sourceMint;
  await deposit(started, { amount: 800n, sourceMint: mint });
  const { recipient, amount } = depositTracker(started).entries[0]!;
  const watch = watchVotes(started.pair, started.world);
  return { bridge: started, watch, mint, vote: { index: 0n, approve: true, amount, recipient, sourceMint: mint } };
}

describe('the soak vote watch', () => {
  it('counts each authority landing, and a vote carried by a second landed transaction as landed twice', { timeout: 60_000 }, async () => {
    const { bridge, watch, vote } = await oneDeposit();

    await rawAckDeposit(bridge, 0, vote);
    watch.poll();
    expect(watch.totals()[0]).toEqual({ landed: 1, landedWithError: 0, duplicateVotes: 0, uninspected: 0, priorityLamports: 0n });
    expect(watch.totals()[1]!.landed).toBe(0);

    // The program refuses a second vote: without preflight it lands with an error, its fee paid.
    await expect(rawAckDeposit(bridge, 0, vote, true)).rejects.toThrow(/landed with error/);
    watch.poll();
    expect(watch.totals()[0]).toEqual({ landed: 2, landedWithError: 1, duplicateVotes: 1, uninspected: 0, priorityLamports: 0n });
  });

  it('keys votes by generation: a re-vote after a governance change is no duplicate, a second one in the same generation is', {
    timeout: 60_000,
  }, async () => {
    const { bridge, watch, vote, mint } = await oneDeposit();

    await rawAckDeposit(bridge, 0, vote);
    // One vote of two: the entry is still Voting, so set_token_pair removes it and rewinds authority 0.
    await setTokenPair(bridge, mint, { frozen: false, limitRemaining: 1_000_000n, vaultBalance: 1_000_000n });
    await rawAckDeposit(bridge, 0, vote);
    watch.poll();
    expect(watch.governance().map(({ chain }) => chain)).toEqual(['target']);
    expect(watch.totals()[0]).toEqual({ landed: 2, landedWithError: 0, duplicateVotes: 0, uninspected: 0, priorityLamports: 0n });

    await expect(rawAckDeposit(bridge, 0, vote, true)).rejects.toThrow(/landed with error/);
    watch.poll();
    expect(watch.totals()[0]).toEqual({ landed: 3, landedWithError: 1, duplicateVotes: 1, uninspected: 0, priorityLamports: 0n });
  });
});
