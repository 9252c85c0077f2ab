import { chainBounds } from '../../src/chain/client/chain-bounds.js';
import { afterEach, describe, expect, it } from 'vitest';
import { worstCaseCycleMs } from '../../src/machines/delays.js';
import type { FaultSettings } from '../../devnet/faults/settings.js';
import { NOTHING_ATTEMPTED, startBridgeCranks, type BridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { depositRejected, settleWithin } from './support/settle.js';

/**
 * RPC faults injected by the devnet, with production confirmation timing: every send failing
 * with HTTP 500, or accepted and dropped, so that each attempt ends at its blockhash's expiry.
 * The cranks retry within the attempt limit, report exhausted actions in last_error until a
 * clean cycle, and never land a vote twice: every authority paid for exactly the transactions
 * its crank counted. (One file of three, which run side by side: faults-expiry.test.ts,
 * faults.test.ts, faults-landing.test.ts.)
 */

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

describe('RPC faults', () => {
  describe('with production confirmation timing (a blockhash lives 151 slots of 10 ms)', () => {
    const SLOT_MS = 10;
    const settings = { maxAttempts: 2, retryBackoffMs: 20, rpcTimeoutMs: 2_000 };
    const blockhashLifetimeMs = 151 * SLOT_MS;

    /** One cycle of crank `a` while every send fails as `fault` says: it ends within the bound, each attempt at its blockhash's expiry. */
    async function cycleWhileSendsFail(fault: FaultSettings, sends: RegExp): Promise<BridgeCrank[]> {
      bridge = await startDevnetBridge({ slotIntervalMs: SLOT_MS });
      const cranks = await startBridgeCranks(bridge, [0, 1, 2], { ...settings, productionTiming: true });
      const a = cranks[0]!;
      await depositRejected(bridge, 3);
      bridge.pair.target.faults.set(fault);
      const started = Date.now();
      expect(await a.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
      const elapsedMs = Date.now() - started;
      // Each attempt waited for its blockhash to expire; none re-signed inside the attempt.
      expect(elapsedMs).toBeGreaterThan(settings.maxAttempts * blockhashLifetimeMs);
      expect(elapsedMs).toBeLessThan(worstCaseCycleMs(settings, chainBounds({ ...settings, blockhashLifetimeMs })));
      const expiries = a.logs
        .records()
        .filter((record) => record.level === 'warn' && String(record.msg).startsWith('blockhash expired before the transaction landed'));
      expect(expiries).toHaveLength(settings.maxAttempts);
      const health = a.service.health();
      expect(health.last_error).toMatch(
        new RegExp(
          `^ack_deposit 0\\.\\.2 \\(3 votes\\) failed after 2 attempts: .*not landed: its blockhash expired \\(block height past \\d+\\); ${sends.source}; priority fee offered \\d+ micro-lamports/CU`,
        ),
      );
      expect(a.service.status()).toBe('degraded');
      expect(a.logs.records()).toContainEqual(
        expect.objectContaining({ level: 'error', msg: 'crank: ack_deposit failed, moving on to the next action' }),
      );
      bridge.pair.target.faults.clear();
      return cranks;
    }

    it('every send failing with HTTP 500: bounded, named in last_error with the endpoint, then every transfer completes', async () => {
      const cranks = await cycleWhileSendsFail(
        { methods: { sendTransaction: { errorRate: 1, errorKind: 'http500' } } },
        /sendTransaction on the destination chain failed every time \(\d+ sends?; last: HTTP 500 from http:\/\/127\.0\.0\.1:\d+\)/,
      );
      await settleWithin(bridge!, cranks, 6);
      expectSettled(bridge!, 3);
      await expectTransactionsAccounted(bridge!, cranks);
      expect(cranks[0]!.service.status()).toBe('ok');
    });

    it('every send dropped (accepted, never landed): bounded and named as dropped, then every transfer completes', async () => {
      const cranks = await cycleWhileSendsFail(
        { dropTransactions: 1_000_000 },
        /the destination chain's RPC accepted it (\d+) of \1 sends? but it never landed \(dropped before a leader included it\)/,
      );
      await settleWithin(bridge!, cranks, 6);
      expectSettled(bridge!, 3);
      await expectTransactionsAccounted(bridge!, cranks);
    });
  });
});
