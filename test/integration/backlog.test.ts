import { afterEach, describe, expect, it } from 'vitest';
import { AGAVE_COMMITMENT_LAGS } from '../../devnet/bank/commitment-banks.js';
import { MAX_PLANNED_PER_ACTION } from '../../src/machines/planning/cycle-plan.js';
import { depositTracker, nextIndexOf, withdrawTracker } from './support/chain-state.js';
import { banksCaughtUp, NOTHING_ATTEMPTED, runRound, startBridgeCranks, type BridgeCrank } from './support/cranks.js';
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
/**
 * Rounds after the votes, for the cleanups: each crank cleans its turns (docs/crank.md "Cleanup
 * turns"), a late vote can move a turn between two reads, and a turn beyond the window of a
 * crank's read (65 entries from settled_prefix) is the next round's.
 */
const DRAIN_ROUNDS = 3;
/** The deposits' finality, then banksCaughtUp before phases 2, 3, 4, then one per drain round. */
const FINALITY_WAITS = 4 + DRAIN_ROUNDS;
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
      // Authority 2 votes late and finalizes the first batch on the source; its follow-up proposes the rest. Entry 0's
      // cleanup is authority 1's turn (authority 0 has not voted on it: docs/crank.md "Cleanup turns"), so settled_prefix
      // stays 0 whatever authority 2's follow-up (banks without lags) cleaned up.
      expect(await cycleWithBacklog(c!)).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true, ack_withdraw_attempted: true });
      expect(
        depositTracker(bridge)
          .entries.slice(0, MAX_PLANNED_PER_ACTION)
          .every((entry) => entry.status === 'Finalized'),
      ).toBe(true);
      expect(depositTracker(bridge).header.settledPrefix).toBe(0n);

      await banksCaughtUp(bridge);
      // Authority 0 votes late on the first batch and cleans up its turns among them, then its follow-up finalizes the rest.
      const lateVotes = await cycleWithBacklog(a!);
      expect(lateVotes).toMatchObject({ ack_deposit_attempted: false, ack_withdraw_attempted: true });
      expect(lateVotes.cleanup_attempted).toBe(lateVotes.cleanup_completed);
      expect(depositTracker(bridge).entries.every((entry) => entry.status === 'Finalized')).toBe(true);
      // Every cleanup is then some crank's turn: all done within DRAIN_ROUNDS rounds, none refused.
      for (let round = 0; round < DRAIN_ROUNDS && depositTracker(bridge).header.settledPrefix < BigInt(TRANSFERS); round++)
        for (const report of await runRound(cranks)) expect(report.cleanup_attempted).toBe(report.cleanup_completed);

      expectSettled(bridge, TRANSFERS);
      for (const crank of cranks) expect(crank.service.health().last_error).toBeNull();
      await expectTransactionsAccounted(bridge, cranks);
    },
    TIMEOUT_MS,
  );
});
