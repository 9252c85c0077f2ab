import { afterEach, describe, expect, it } from 'vitest';
import { MAX_PLANNED_PER_ACTION } from '../../src/machines/planning/cycle-plan.js';
import { depositTracker, nextIndexOf, withdrawTracker } from './support/chain-state.js';
import { NOTHING_ATTEMPTED, startBridgeCranks, type BridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { deposit } from './support/transactions.js';
import { waitFor } from '../support/wait-for.js';
import { metricValue } from '../support/metric-value.js';

/**
 * More transfers than one batch: a cycle plans at most 64 votes (or cleanups) per action, and
 * a cycle that left work behind is followed at once by the next one, without waiting the
 * poll interval (an hour here, far longer than the test may run). The crank's own timers are
 * the point, so the follow-up cycles are awaited with a bounded wait, never triggered.
 */

const TRANSFERS = MAX_PLANNED_PER_ACTION + 6;

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

async function completedCycles(crank: BridgeCrank): Promise<number> {
  return metricValue(crank.metrics.crankCycles, {});
}

/** One requested cycle, then the follow-up the backlog starts on its own; returns the requested cycle's report. */
async function cycleWithBacklog(crank: BridgeCrank) {
  const before = await completedCycles(crank);
  const report = await crank.service.runOnce();
  await waitFor(async () => (await completedCycles(crank)) >= before + 2, {
    timeoutMs: 10_000,
    what: `authority ${crank.slot}'s follow-up cycle`,
  });
  return report;
}

describe('a backlog bigger than one batch', () => {
  it(`${TRANSFERS} transfers: every phase drains in back-to-back cycles, without waiting the poll interval`, async () => {
    bridge = await startDevnetBridge();
    const cranks = await startBridgeCranks(bridge, [0, 1, 2], { pollIntervalMs: 3_600_000 });
    const [a, b, c] = cranks;
    const frozen = bridge.world.tokenPairs.frozen.sourceMint;
    for (let i = 0; i < TRANSFERS; i++) await deposit(bridge, { amount: 10n + BigInt(i), sourceMint: frozen });

    expect(await cycleWithBacklog(a!)).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
    expect(nextIndexOf(withdrawTracker(bridge), bridge, 0)).toBe(TRANSFERS);
    expect(await metricValue(a!.metrics.crankSubmissions, { action: 'ack_deposit', outcome: 'landed' })).toBe(2);

    // Authority 1 finalizes all of them; its follow-up cycle, reading them Finalized, relays the first batch.
    expect(await cycleWithBacklog(b!)).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
    expect(withdrawTracker(bridge).entries.every((entry) => entry.status === 'Finalized')).toBe(true);
    expect(depositTracker(bridge).entries.filter((entry) => entry.status === 'Relaying')).toHaveLength(MAX_PLANNED_PER_ACTION);

    // Authority 2 votes late and finalizes the first batch on the source; its follow-up proposes the rest and cleans the first batch up.
    expect(await cycleWithBacklog(c!)).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true, ack_withdraw_attempted: true });
    expect(depositTracker(bridge).header.settledPrefix).toBe(BigInt(MAX_PLANNED_PER_ACTION));

    // Authority 0 votes late on the first batch, then its follow-up finalizes the rest.
    expect(await cycleWithBacklog(a!)).toEqual({ ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true });
    expect(depositTracker(bridge).entries.every((entry) => entry.status === 'Finalized')).toBe(true);
    // Work a cycle's own votes create is the next cycle's: the last entries are cleaned up by the next request.
    expect(await b!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true, cleanup_attempted: 6, cleanup_completed: 6 });

    expectSettled(bridge, TRANSFERS);
    for (const crank of cranks) expect(crank.service.health().last_error).toBeNull();
    await expectTransactionsAccounted(bridge, cranks);
  });
});
