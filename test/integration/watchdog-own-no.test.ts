import { afterEach, describe, expect, it } from 'vitest';
import { depositTracker, votersMask, withdrawTracker } from './support/chain-state.js';
import { banksCaughtUp, errorLines, startBridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { deposit, rawAckDeposit } from './support/transactions.js';
import { metricValue } from '../support/metric-value.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The watchdog's `own_no_on_matching_proposal` over a devnet bridge (docs/operating.md "The
 * watchdog"): a no of this authority's key stands on an honest proposal still under vote, as a
 * no signed before a governance reset lands after it on the proposal that replaced the old one
 * (the property model's five-authority finding), or as another signer of the key would leave it.
 * The crank, polling on its own timer, counts it and writes one error line naming the entry.
 */

const POLL_MS = 1_000;
const SLOT_MS = 20;
const OWN = 2;

let bridge: DevnetBridge | undefined;
afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

describe('the watchdog on this authority’s own no', () => {
  it('names an honest proposal held by this authority’s no, once', async () => {
    bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
    await deposit(bridge, { amount: 300n, sourceMint: bridge.world.tokenPairs.normal.sourceMint });
    const source = depositTracker(bridge).entries[0]!;
    const transfer = { index: 0n, amount: source.amount, recipient: source.recipient, sourceMint: source.sourceMint };
    await rawAckDeposit(bridge, 0, { ...transfer, approve: true });
    await rawAckDeposit(bridge, OWN, { ...transfer, approve: false });
    expect(withdrawTracker(bridge).entries[0]).toMatchObject({ status: 'Voting', yesVotes: votersMask(0), noVotes: votersMask(OWN) });
    await banksCaughtUp(bridge);

    const crank = startBridgeCrank(bridge, OWN, { pollIntervalMs: POLL_MS });
    // Bounded by a few polls and the finalized re-check: timing is not this test's point (watchdog.test.ts holds it).
    await waitFor(async () => (await metricValue(crank.metrics.invariantBreaches, { invariant: 'own_no_on_matching_proposal' })) === 1, {
      timeoutMs: 10 * POLL_MS,
      what: 'the own no counted',
    });
    const generation = withdrawTracker(bridge).header.generation;
    const lines = errorLines(crank);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      breach: `own_no_on_matching_proposal:target:0:g${generation}`,
      invariant: 'own_no_on_matching_proposal',
      entry: 0,
    });
    expect(String(lines[0]!['bridge'])).toContain(`Voting amount 300, recipient ${source.recipient}`);
    expect(String(lines[0]!['expected'])).toBe('this authority approves a proposal equal to its source entry');
    // Raised once: later cycles see the same fact under the same id.
    await new Promise((resolve) => setTimeout(resolve, 2 * POLL_MS));
    expect(errorLines(crank)).toHaveLength(1);
    expect(await metricValue(crank.metrics.invariantBreaches, { invariant: 'own_no_on_matching_proposal' })).toBe(1);
    await crank.service.stop(2_000);
  });
});
