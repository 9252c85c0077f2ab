import { expect } from 'vitest';
import { depositTracker, landedStatus, landedTransactionsPaidBy, nextIndexOf, withdrawTracker } from './chain-state.js';
import { loggedSignatures, type BridgeCrank } from './cranks.js';
import type { DevnetBridge } from './devnet-bridge.js';
import { metricValue } from '../../support/metric-value.js';

/** Assertions every scenario ends with, on the chains and on what each crank reports. */

/**
 * Every one of `count` transfers went through all five phases: the destination entry is
 * Finalized, the source entry Finalized with the same result and cleaned up, both settled
 * prefixes are at `count`, and every honest authority's positions moved past it.
 */
export function expectSettled(bridge: DevnetBridge, count: number, honestSlots: readonly number[] = [0, 1, 2]): void {
  const deposits = depositTracker(bridge);
  const withdrawals = withdrawTracker(bridge);
  expect(deposits.header.entryCount).toBe(BigInt(count));
  expect(withdrawals.header.entryCount).toBe(BigInt(count));
  expect(deposits.header.settledPrefix).toBe(BigInt(count));
  expect(withdrawals.header.settledPrefix).toBe(BigInt(count));
  withdrawals.entries.forEach((withdrawal, index) => {
    const entry = deposits.entries[index]!;
    expect(withdrawal, `withdraw entry ${index}`).toMatchObject({
      status: 'Finalized',
      amount: entry.amount,
      recipient: entry.recipient,
      sourceMint: entry.sourceMint,
    });
    expect(entry, `deposit entry ${index}`).toMatchObject({ status: 'Finalized', result: withdrawal.result, cleanupCompleted: true });
  });
  for (const slot of honestSlots) {
    expect(nextIndexOf(deposits, bridge, slot), `authority ${slot} on the DepositTracker`).toBe(count);
    expect(nextIndexOf(withdrawals, bridge, slot), `authority ${slot} on the WithdrawTracker`).toBe(count);
  }
}

/**
 * No transaction landed twice or behind a crank's back: the transactions a crank logged as
 * landed are distinct and on a chain, and their number equals its `total_actions_submitted`,
 * its landed-transactions counter, and the fees its authority paid on both chains (the devnet
 * charges every landed transaction, failed ones included). Transactions that landed with an
 * error are counted too (their fee was paid), but only as many as `failedLanded` expects for
 * that authority (none by default): a vote sent twice would land as such a failure.
 */
export async function expectTransactionsAccounted(
  bridge: DevnetBridge,
  cranks: readonly BridgeCrank[],
  failedLanded: Readonly<Record<number, number>> = {},
): Promise<void> {
  for (const crank of cranks) {
    const signatures = loggedSignatures(crank);
    const what = `authority ${crank.slot}`;
    expect(new Set(signatures).size, `${what}: distinct landed signatures`).toBe(signatures.length);
    const statuses = signatures.map((signature) => landedStatus(bridge, signature));
    expect(
      statuses.filter((status) => status === undefined),
      `${what}: logged as landed, not on any chain`,
    ).toEqual([]);
    expect(statuses.filter((status) => status?.err !== null).length, `${what}: landed with an error`).toBe(failedLanded[crank.slot] ?? 0);
    expect(crank.service.health().total_actions_submitted, `${what}: total_actions_submitted`).toBe(signatures.length);
    expect(await metricValue(crank.metrics.crankTransactionsLanded, {}), `${what}: landed counter`).toBe(signatures.length);
    expect(landedTransactionsPaidBy(bridge, crank.slot, crank.startBalances), `${what}: fees paid`).toBe(signatures.length);
  }
}

/** No crank took a move of its own nonces for another signer's (docs/chain-client.md, "Who signs, from the nonces"). */
export async function expectNoForeignSignature(cranks: readonly BridgeCrank[]): Promise<void> {
  for (const crank of cranks) for (const chain of ['source', 'target']) expect(await metricValue(crank.metrics.foreignSignatures, { chain })).toBe(0);
}
