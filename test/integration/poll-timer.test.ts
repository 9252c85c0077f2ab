import { Keypair } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { PROGRAM_ERRORS } from '../../src/chain/program-errors.js';
import { depositTracker, landedStatus, withdrawTracker } from './support/chain-state.js';
import { startBridgeCrank, type BridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { claimAll, deposit, setTokenPair } from './support/transactions.js';
import { waitFor } from '../support/wait-for.js';
import { metricValue } from '../support/metric-value.js';

/**
 * No cycle is requested here: three cranks run on their own poll timers, concurrently, as
 * deployed servers do, while the user deposits and claims and governance resets pending work
 * once. Every transfer must reach the end on its own.
 */

const POLL_INTERVAL_MS = 100;

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

function allSettled(b: DevnetBridge, count: number): boolean {
  const { header } = depositTracker(b);
  return header.entryCount === BigInt(count) && header.settledPrefix === BigInt(count);
}

/**
 * This crank's transactions that landed with an error, each checked to be a cleanup that lost the
 * race to another crank's (CleanupAlreadyCompleted; a vote sent twice would fail otherwise).
 */
function lostCleanupRaces(b: DevnetBridge, crank: BridgeCrank): number {
  const failed = crank.logs
    .records()
    .filter((record) => Array.isArray(record.signatures))
    .flatMap((record) =>
      (record.signatures as string[]).map((signature) => ({ action: record.action, err: landedStatus(b, signature)?.err ?? null })),
    )
    .filter(({ err }) => err !== null);
  const lostRace = { action: 'cleanup_deposit', err: { InstructionError: [expect.any(Number), { Custom: PROGRAM_ERRORS.CleanupAlreadyCompleted }] } };
  expect(failed, `authority ${crank.slot}: transactions landed with an error`).toEqual(failed.map(() => lostRace));
  return failed.length;
}

describe('cranks on their own poll timers', () => {
  it('carry every kind of transfer to the end with no request, through a governance reset', async () => {
    bridge = await startDevnetBridge();
    const { tokenPairs } = bridge.world;
    const cranks = [0, 1, 2].map((slot) => startBridgeCrank(bridge!, slot, { pollIntervalMs: POLL_INTERVAL_MS }));
    const transfers = [
      { amount: 300n, sourceMint: tokenPairs.normal.sourceMint },
      { amount: 1_500n, sourceMint: tokenPairs.lowLimit.sourceMint },
      { amount: 50n, sourceMint: tokenPairs.frozen.sourceMint },
      { amount: 900n, sourceMint: tokenPairs.lowVault.sourceMint },
      { amount: 70n, sourceMint: Keypair.generate().publicKey.toBase58() },
      { amount: 400n, sourceMint: tokenPairs.normal.sourceMint },
    ];
    for (const transfer of transfers.slice(0, 3)) await deposit(bridge, transfer);
    await waitFor(() => withdrawTracker(bridge!).entries.length > 0, { timeoutMs: 5_000, what: 'a first ack_deposit proposal' });
    const generation = withdrawTracker(bridge).header.generation;
    const { normal } = tokenPairs;
    const settings = { frozen: normal.frozen, limitRemaining: BigInt(normal.limitRemaining), vaultBalance: BigInt(normal.vaultBalance) };
    await setTokenPair(bridge, normal.sourceMint, settings);
    for (const transfer of transfers.slice(3)) await deposit(bridge, transfer);

    await waitFor(
      async () => {
        await claimAll(bridge!);
        return allSettled(bridge!, transfers.length);
      },
      { timeoutMs: 20_000, intervalMs: 50, what: 'every transfer settled by the cranks on their own' },
    );
    await Promise.all(cranks.map((crank) => crank.service.stop(2_000)));

    expect(withdrawTracker(bridge).header.generation).toBe(generation + 1n);
    expectSettled(bridge, transfers.length);
    expect(depositTracker(bridge).entries.map((entry) => entry.refundedAmount)).toEqual([0n, 500n, 50n, 900n, 70n, 0n]);
    for (const crank of cranks) {
      expect(await metricValue(crank.metrics.crankCycles, {})).toBeGreaterThan(3);
      expect(crank.service.health().enabled).toBe(false);
    }
    // Three cranks read the source at finalized and clean up concurrently: on Agave's banks one may send a cleanup another's already did.
    await expectTransactionsAccounted(bridge, cranks, Object.fromEntries(cranks.map((crank) => [crank.slot, lostCleanupRaces(bridge!, crank)])));
  });
});
