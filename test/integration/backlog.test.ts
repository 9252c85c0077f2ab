import { afterEach, describe, expect, it } from 'vitest';
import { AGAVE_COMMITMENT_LAGS } from '../../devnet/bank/commitment-banks.js';
import { MAX_PLANNED_PER_ACTION } from '../../src/machines/planning/cycle-plan.js';
import { depositTracker, nextIndexOf, withdrawTracker } from './support/chain-state.js';
import { banksCaughtUp, NOTHING_ATTEMPTED, startBridgeCranks, type BridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { deposit } from './support/transactions.js';
import { waitFor } from '../support/wait-for.js';
import { metricValue } from '../support/metric-value.js';

/**
 * More transfers than one batch: a cycle plans at most 64 votes (or cleanups) per action, and
 * a cycle that left work behind is followed at once by the next one, without waiting the
 * poll interval (an hour here, far longer than the test may run). The crank's own timers are
 * the point, so the follow-up cycles are awaited with a bounded wait, never triggered. Between
 * phases (one authority's requested cycle and its follow-ups) the test waits for the finalized
 * banks, as a server polling at production pace would see the previous phase a poll later.
 */

const TRANSFERS = MAX_PLANNED_PER_ACTION + 6;
const SLOT_MS = 50;
/** The deposits' finality, then banksCaughtUp before phases 2, 3, 4 and the last request. */
const FINALITY_WAITS = 5;
/** 30 s for the cycles themselves, plus each finality wait at its bound on Agave's lags (banksCaughtUp's: 2 x lag x slot + 2 s). */
const TIMEOUT_MS = 30_000 + FINALITY_WAITS * (2 * AGAVE_COMMITMENT_LAGS.finalizedLagSlots * SLOT_MS + 2_000);

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
  it(
    `${TRANSFERS} transfers: every phase drains in back-to-back cycles, without waiting the poll interval`,
    async () => {
      bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
      // A follow-up cycle reads the source at finalized: on Agave's banks, what its own requested cycle wrote there is the next phase's work.
      const followUpSeesOwnSourceWrites = bridge.pair.source.bank.commitmentLags.finalizedLagSlots === 0;
      const cranks = await startBridgeCranks(bridge, [0, 1, 2], { pollIntervalMs: 3_600_000 });
      const [a, b, c] = cranks;
      const frozen = bridge.world.tokenPairs.frozen.sourceMint;
      // Sent together: each deposit returns once finalized, so one at a time would wait TRANSFERS finality lags.
      await Promise.all(Array.from({ length: TRANSFERS }, (_, i) => deposit(bridge!, { amount: 10n + BigInt(i), sourceMint: frozen })));

      expect(await cycleWithBacklog(a!)).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
      expect(nextIndexOf(withdrawTracker(bridge), bridge, 0)).toBe(TRANSFERS);
      expect(await metricValue(a!.metrics.crankSubmissions, { action: 'ack_deposit', outcome: 'landed' })).toBe(2);

      await banksCaughtUp(bridge);
      // Authority 1 finalizes all of them; its follow-up cycle, reading them Finalized, relays the first batch.
      expect(await cycleWithBacklog(b!)).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
      expect(withdrawTracker(bridge).entries.every((entry) => entry.status === 'Finalized')).toBe(true);
      expect(depositTracker(bridge).entries.filter((entry) => entry.status === 'Relaying')).toHaveLength(MAX_PLANNED_PER_ACTION);

      await banksCaughtUp(bridge);
      // Authority 2 votes late and finalizes the first batch on the source; its follow-up proposes the rest and (banks without lags) cleans the first batch up.
      expect(await cycleWithBacklog(c!)).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true, ack_withdraw_attempted: true });
      expect(
        depositTracker(bridge)
          .entries.slice(0, MAX_PLANNED_PER_ACTION)
          .every((entry) => entry.status === 'Finalized'),
      ).toBe(true);
      expect(depositTracker(bridge).header.settledPrefix).toBe(followUpSeesOwnSourceWrites ? BigInt(MAX_PLANNED_PER_ACTION) : 0n);

      await banksCaughtUp(bridge);
      // Authority 0 votes late on the first batch (and, on Agave's banks, cleans it up), then its follow-up finalizes the rest.
      const firstBatchCleanups = followUpSeesOwnSourceWrites ? 0 : MAX_PLANNED_PER_ACTION;
      expect(await cycleWithBacklog(a!)).toEqual({
        ...NOTHING_ATTEMPTED,
        ack_withdraw_attempted: true,
        cleanup_attempted: firstBatchCleanups,
        cleanup_completed: firstBatchCleanups,
      });
      expect(depositTracker(bridge).entries.every((entry) => entry.status === 'Finalized')).toBe(true);
      expect(depositTracker(bridge).header.settledPrefix).toBe(BigInt(MAX_PLANNED_PER_ACTION));
      // Work a cycle's own votes create is the next cycle's: the last entries are cleaned up by the next request.
      await banksCaughtUp(bridge);
      expect(await b!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true, cleanup_attempted: 6, cleanup_completed: 6 });

      expectSettled(bridge, TRANSFERS);
      for (const crank of cranks) expect(crank.service.health().last_error).toBeNull();
      await expectTransactionsAccounted(bridge, cranks);
    },
    TIMEOUT_MS,
  );
});
