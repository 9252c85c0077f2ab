import { afterEach, describe, expect, it } from 'vitest';
import { failedAttemptErrors, runRound, startBridgeCrank, startBridgeCranks } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { depositRejected, settleAfterRounds } from './support/settle.js';
import { metricSample } from '../support/metric-value.js';

/**
 * What real RPC nodes do that the friendly devnet node does not (shared/PROTOCOL.md), reproduced
 * with a devnet fault over real HTTP: a load balancer over a backend 40 slots behind (the other
 * cases: real-nodes.test.ts).
 */

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

/** What a decision taken from a stale view would say: a false second signer, a vote refused as out of order or as a repeat. */
const STALE_VIEW_ALARMS = /foreign|another process|not by this server|VoteOutOfOrder|VoteMismatch|InvalidVote/;

describe('a load balancer over nodes at different heights', () => {
  it('one backend 40 slots behind: every transfer completes, no foreign vote, no foreign signature, no vote refused; a restart does not flag its previous life', async () => {
    const b = (bridge = await startDevnetBridge());
    b.pair.source.advanceSlots(200);
    b.pair.target.advanceSlots(200);
    const source = await b.pair.source.addEndpoint();
    const target = await b.pair.target.addEndpoint();
    source.faults.set({ alternateBehindSlots: 40 });
    target.faults.set({ alternateBehindSlots: 40 });
    const urls = { sourceRpcUrls: [source.url], targetRpcUrls: [target.url] };
    const cranks = await startBridgeCranks(b, [0, 1, 2], urls);
    await depositRejected(b, 4);
    await settleAfterRounds(b, cranks, 4, 8);

    // Authority 0 votes, then restarts at once; the balancer sends its first reads to the fresh
    // backend, then half of them to one 40 slots behind, which does not know the newest
    // transaction (blocks are paused, so it stays so) but lists the older ones.
    b.pair.source.advanceSlots(100);
    b.pair.target.advanceSlots(100);
    await depositRejected(b, 1);
    // The lagging backend serves the chain as it was before the deposit (old state at its old
    // slot, no older than the floor): a cycle that read it sees nothing to do yet; one of the
    // next few reads the fresh backend.
    let attempted = false;
    for (let cycle = 0; cycle < 8 && !attempted; cycle++) attempted = (await cranks[0]!.service.runOnce()).ack_deposit_attempted;
    expect(attempted).toBe(true);
    b.pair.source.pause();
    b.pair.target.pause();
    source.faults.set({ alternateBehindSlots: 0 });
    target.faults.set({ alternateBehindSlots: 0 });
    // A restart: the first life stops (left running, it would be a twin that knows nothing of
    // the second life's votes, and a view older than them is then no stale read but a race).
    await cranks[0]!.service.stop(2_000);
    const restarted = startBridgeCrank(b, 0, urls);
    await restarted.service.runOnce();
    source.faults.set({ alternateBehindSlots: 40 });
    target.faults.set({ alternateBehindSlots: 40 });
    for (let cycle = 0; cycle < 8; cycle++) await restarted.service.runOnce();
    b.pair.source.resume();
    b.pair.target.resume();
    const afterRestart = [restarted, cranks[1]!, cranks[2]!];
    for (let round = 0; round < 6; round++) await runRound(afterRestart);
    expectSettled(b, 5);
    await expectTransactionsAccounted(b, afterRestart);

    for (const crank of [...cranks, restarted]) {
      // A read that met the lagging backend at every try fails its cycle (the next one reads
      // afresh); no decision was ever taken from it.
      expect(failedAttemptErrors(crank).filter((err) => STALE_VIEW_ALARMS.test(err))).toEqual([]);
      expect({ crank: crank === restarted ? 'restarted' : crank.slot, lastError: crank.service.health().last_error ?? '' }).not.toMatchObject({
        lastError: expect.stringMatching(STALE_VIEW_ALARMS),
      });
      // Counted from zero at start (the dashboard's series exist before any event): none counted.
      expect(await metricSample(crank.metrics.foreignSignatures, { chain: 'source' })).toBe(0);
      expect(await metricSample(crank.metrics.foreignSignatures, { chain: 'target' })).toBe(0);
    }
  }, 120_000);
});
