import { afterEach, describe, expect, it } from 'vitest';
import { depositTracker, landedTransactionsPaidBy, votersMask, withdrawTracker } from './support/chain-state.js';
import { runRound, startBridgeCrank, startBridgeCranks } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectTransactionsAccounted } from './support/expectations.js';
import { createRequestGate } from './support/request-gate.js';
import { deposit } from './support/transactions.js';

/**
 * Shutdown in the middle of a cycle against a real chain: the running submission either
 * finishes before the deadline (and nothing new is submitted after it) or is aborted through
 * its AbortSignal at the deadline (and nothing lands); the request the cycle served is
 * answered with CRANK__STOPPED either way.
 */

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

/** Entry 0 Rejected and Finalized by authorities 1 and 2: authority 0 owes a late ack_deposit vote and an ack_withdraw proposal. */
async function bridgeWithWorkForAuthority0() {
  bridge = await startDevnetBridge();
  const gate = createRequestGate();
  const a = startBridgeCrank(bridge, 0, { fetch: gate.fetch });
  await a.service.runOnce();
  const others = await startBridgeCranks(bridge, [1, 2]);
  await deposit(bridge, { amount: 100n, sourceMint: bridge.world.tokenPairs.frozen.sourceMint });
  await runRound(others);
  expect(withdrawTracker(bridge).entries[0]).toMatchObject({ status: 'Finalized', yesVotes: votersMask(1, 2) });
  return { b: bridge, a, gate };
}

describe('stopping a crank mid-cycle', () => {
  it('lets the running submission land before the deadline, then submits nothing new', async () => {
    const { b, a, gate } = await bridgeWithWorkForAuthority0();
    const held = gate.holdNext(b.pair.target.url, 'getLatestBlockhash');
    const cycle = a.service.runOnce();
    await held.reached;
    const stopped = a.service.stop(5_000);
    held.release();
    await stopped;

    await expect(cycle).rejects.toMatchObject({ code: 'CRANK__STOPPED' });
    expect(withdrawTracker(b).entries[0]!.yesVotes).toBe(votersMask(0, 1, 2));
    expect(depositTracker(b).entries[0]).toMatchObject({ status: 'Initialized', yesVotes: 0 });
    expect(a.service.health()).toMatchObject({ enabled: false, total_actions_submitted: 1 });
    await expect(a.service.runOnce()).rejects.toMatchObject({ code: 'CRANK__STOPPED' });
    await expectTransactionsAccounted(b, [a]);
  });

  it('aborts the running submission at the deadline: nothing is signed or lands', async () => {
    const { b, a, gate } = await bridgeWithWorkForAuthority0();
    const held = gate.holdNext(b.pair.target.url, 'getLatestBlockhash');
    const cycle = a.service.runOnce();
    await held.reached;
    const startedAt = Date.now();
    await a.service.stop(100);

    expect(Date.now() - startedAt).toBeLessThan(2_000);
    await expect(cycle).rejects.toMatchObject({ code: 'CRANK__STOPPED' });
    expect(withdrawTracker(b).entries[0]!.yesVotes).toBe(votersMask(1, 2));
    expect(a.service.health()).toMatchObject({ enabled: false, total_actions_submitted: 0 });
    expect(landedTransactionsPaidBy(b, 0, a.startBalances)).toBe(0);
    held.release();
  });
});
