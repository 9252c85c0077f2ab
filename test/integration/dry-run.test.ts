import { Keypair } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { landedTransactionsPaidBy, withdrawTracker } from './support/chain-state.js';
import { loggedSignatures, startBridgeCrank, startBridgeCranks, type BridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { claimAll, deposit } from './support/transactions.js';

/**
 * BRIDGE_DRY_RUN next to live authorities on the devnet: the dry-run crank (authority 1) plans
 * the votes a live crank sends in the same state, and its key pays for no transaction on either
 * chain (the devnet charges every landed transaction, failed ones included).
 */

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

type Action = 'ack_deposit' | 'ack_withdraw' | 'cleanup_deposit';

/** What the dry-run crank logged it would submit, per action, since `from` log records. */
function planned(crank: BridgeCrank, action: Action, from = 0): Array<{ indices: number[]; votes: unknown[] }> {
  return crank.logs
    .records()
    .slice(from)
    .filter((record) => record.action === action && String(record.msg).includes('dry run, not submitted'))
    .map((record) => ({ indices: record.indices as number[], votes: record.votes as unknown[] }));
}

/** The indices a live crank logged as landed for an action. */
function landedIndices(crank: BridgeCrank, action: Action): number[][] {
  return crank.logs
    .records()
    .filter((record) => record.action === action && record.outcome === 'landed')
    .map((record) => record.indices as number[]);
}

describe('dry run next to live authorities', () => {
  it('plans the votes the live cranks send and submits nothing from its key', async () => {
    bridge = await startDevnetBridge();
    const [live0, live2] = await startBridgeCranks(bridge, [0, 2]);
    const dry = startBridgeCrank(bridge, 1, { dryRun: true });
    await dry.service.runOnce();
    const mint = bridge.world.tokenPairs.normal.sourceMint;
    for (const amount of [300n, 400n]) await deposit(bridge, { amount, sourceMint: mint, recipient: Keypair.generate().publicKey.toBase58() });

    // ack_deposit: the dry run plans yes votes on 0 and 1; authority 0 then sends exactly those.
    let mark = dry.logs.records().length;
    await dry.service.runOnce();
    expect(planned(dry, 'ack_deposit', mark)).toEqual([
      {
        indices: [0, 1],
        votes: [
          { index: 0, approve: true },
          { index: 1, approve: true },
        ],
      },
    ]);
    await live0!.service.runOnce();
    expect(landedIndices(live0!, 'ack_deposit').flat()).toEqual([0, 1]);
    await live2!.service.runOnce();
    expect(withdrawTracker(bridge).entries.map((entry) => entry.status)).toEqual(['Finalized', 'Finalized']);
    await claimAll(bridge);

    // ack_withdraw: in the same state the dry run plans what authority 0 relays.
    mark = dry.logs.records().length;
    await dry.service.runOnce();
    const dryWithdraws = planned(dry, 'ack_withdraw', mark);
    await live0!.service.runOnce();
    expect(dryWithdraws.flatMap((plan) => plan.indices)).toEqual(landedIndices(live0!, 'ack_withdraw').flat());
    expect(dryWithdraws.flatMap((plan) => plan.indices)).toEqual([0, 1]);

    expect(landedTransactionsPaidBy(bridge, 1, dry.startBalances)).toBe(0);
    expect(loggedSignatures(dry)).toEqual([]);
    expect(dry.service.health()).toMatchObject({ dry_run: true, total_actions_submitted: 0, last_success_at: null, last_error: null });
    expect(dry.service.health().last_action).toMatch(/^dry run: /);
    expect(landedTransactionsPaidBy(bridge, 0, live0!.startBalances)).toBeGreaterThan(0);
  });
});
