import { Keypair } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { TOKEN_PAIR_SIZE } from '../../src/chain/codec/layout.js';
import { tokenPairAddress } from '../../src/chain/pda.js';
import type { DepositResult, RejectionReason } from '../../src/chain/types.js';
import type { CrankReport } from '../../src/machines/crank-types.js';
import { depositTracker, nextIndexOf, tokenPair, votersMask, withdrawTracker } from './support/chain-state.js';
import { banksCaughtUp, NOTHING_ATTEMPTED, runRound, startBridgeCranks, type BridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { expectSettled, expectTransactionsAccounted } from './support/expectations.js';
import { claim, deposit, setTokenPair } from './support/transactions.js';

/**
 * Three cranks (authorities 0, 1, 2; threshold 2) carry transfers through all five phases on
 * the devnet, one explicit cycle at a time, for every result kind the program can produce.
 */

let bridge: DevnetBridge | undefined;

/**
 * A round in which each cycle reads what the cycles before it wrote at every commitment (both
 * finalized banks caught up before each cycle and after the last): where a test pins that the
 * voter after the threshold reads the result Finalized on the source (read at finalized) and
 * cleans up in the same cycle. On Agave's banks that voter, run at once, votes late and the
 * cleanup comes a round later.
 */
async function runRoundCaughtUp(cranks: readonly BridgeCrank[]): Promise<CrankReport[]> {
  const reports: CrankReport[] = [];
  for (const crank of cranks) {
    await banksCaughtUp(crank.bridge);
    reports.push(await crank.service.runOnce());
  }
  await banksCaughtUp(cranks[0]!.bridge);
  return reports;
}

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

describe('transfers through all five phases', () => {
  it('Confirmed in full: not relayed while the token account is Pending, relayed once the user claims, then cleaned up with no refund', async () => {
    bridge = await startDevnetBridge();
    const cranks = await startBridgeCranks(bridge, [0, 1, 2]);
    const [a, b, c] = cranks;
    const mint = bridge.world.tokenPairs.normal.sourceMint;
    const recipient = Keypair.generate().publicKey.toBase58();
    await deposit(bridge, { amount: 700n, sourceMint: mint, recipient });

    // ack_deposit: authority 0 proposes, authority 1's yes reaches the threshold, authority 2 votes late.
    expect(await a!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
    expect(withdrawTracker(bridge).entries[0]).toMatchObject({
      status: 'Voting',
      amount: 700n,
      recipient,
      sourceMint: mint,
      yesVotes: votersMask(0),
    });
    expect(await b!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
    const confirmed: DepositResult = { kind: 'Confirmed', amount: 700n };
    expect(withdrawTracker(bridge).entries[0]).toMatchObject({ status: 'Finalized', result: confirmed, createdTokenAccount: 'Pending' });
    expect(await c!.service.runOnce()).toEqual({ ...NOTHING_ATTEMPTED, ack_deposit_attempted: true });
    expect(withdrawTracker(bridge).entries[0]).toMatchObject({ yesVotes: votersMask(0, 1, 2), noVotes: 0 });

    // Rule 3.1: Confirmed with created_token_account Pending is not relayed, however often the cranks run.
    for (let round = 0; round < 2; round++) expect(await runRound(cranks)).toEqual([NOTHING_ATTEMPTED, NOTHING_ATTEMPTED, NOTHING_ATTEMPTED]);
    expect(depositTracker(bridge).entries[0]).toMatchObject({ status: 'Initialized', yesVotes: 0, proposed: { kind: 'None' } });
    expect(cranks.map((crank) => nextIndexOf(depositTracker(bridge!), bridge!, crank.slot))).toEqual([0, 0, 0]);

    await claim(bridge, 0);
    expect(withdrawTracker(bridge).entries[0]!.createdTokenAccount).toBe('Created');

    // ack_withdraw: proposal, threshold yes, late vote. Authority 2's read already shows the entry
    // Finalized, but its cleanup is authority 0's turn (docs/crank.md "Cleanup turns"): it cleans up next round.
    expect(await runRoundCaughtUp(cranks)).toEqual([
      { ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true },
      { ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true },
      { ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true },
    ]);
    expect(await runRound(cranks)).toEqual([
      { ...NOTHING_ATTEMPTED, cleanup_attempted: 1, cleanup_completed: 1 },
      NOTHING_ATTEMPTED,
      NOTHING_ATTEMPTED,
    ]);
    expect(await runRound(cranks)).toEqual([NOTHING_ATTEMPTED, NOTHING_ATTEMPTED, NOTHING_ATTEMPTED]);

    expect(depositTracker(bridge).entries[0]).toMatchObject({
      status: 'Finalized',
      result: confirmed,
      yesVotes: votersMask(0, 1, 2),
      cleanupCompleted: true,
      refundedAmount: 0n,
    });
    expectSettled(bridge, 1);
    expect(a!.service.health()).toMatchObject({ last_error: null, last_action: 'cleanup_deposit 1 entry' });
    expect(c!.service.health()).toMatchObject({ last_error: null, last_action: 'ack_withdraw 0 (1 vote)' });
    await expectTransactionsAccounted(bridge, cranks);
  });

  it('Confirmed in part by a low-limit token pair: the refund is amount - confirmed', async () => {
    bridge = await startDevnetBridge();
    const cranks = await startBridgeCranks(bridge, [0, 1, 2]);
    const lowLimit = bridge.world.tokenPairs.lowLimit;
    await deposit(bridge, { amount: 1_500n, sourceMint: lowLimit.sourceMint });

    await runRound(cranks);
    const partial: DepositResult = { kind: 'Confirmed', amount: BigInt(lowLimit.limitRemaining) };
    expect(withdrawTracker(bridge).entries[0]).toMatchObject({
      status: 'Finalized',
      amount: 1_500n,
      result: partial,
      createdTokenAccount: 'Pending',
    });
    expect(tokenPair(bridge, lowLimit.sourceMint).limitRemaining).toBe(0n);
    expect(await runRound(cranks)).toEqual([NOTHING_ATTEMPTED, NOTHING_ATTEMPTED, NOTHING_ATTEMPTED]);

    await claim(bridge, 0);
    await runRound(cranks);
    await runRound(cranks);
    expect(depositTracker(bridge).entries[0]).toMatchObject({ status: 'Finalized', result: partial, cleanupCompleted: true, refundedAmount: 500n });
    expectSettled(bridge, 1);
    await expectTransactionsAccounted(bridge, cranks);
  });

  it('Rejected for every reason an instruction can cause (frozen, limit, vault, no pair): relayed without a claim, refunded in full', async () => {
    bridge = await startDevnetBridge();
    const { tokenPairs } = bridge.world;
    // A pair whose limit is used up; created before any deposit, so the reset it causes finds no pending work.
    const exhausted = Keypair.generate().publicKey.toBase58();
    await setTokenPair(bridge, exhausted, { frozen: false, limitRemaining: 0n, vaultBalance: 1_000_000n });
    const cranks = await startBridgeCranks(bridge, [0, 1, 2]);
    const transfers: Array<{ amount: bigint; sourceMint: string; reason: RejectionReason }> = [
      { amount: 100n, sourceMint: tokenPairs.frozen.sourceMint, reason: 'TokenPairFrozen' },
      { amount: 300n, sourceMint: exhausted, reason: 'LimitExceeded' },
      { amount: 600n, sourceMint: tokenPairs.lowVault.sourceMint, reason: 'InsufficientFunds' },
      { amount: 900n, sourceMint: Keypair.generate().publicKey.toBase58(), reason: 'TokenPairNotFound' },
    ];
    for (const transfer of transfers) await deposit(bridge, transfer);

    // Authority 2's read already shows the results Finalized: it votes late and proposes them to the source at once.
    expect(await runRound(cranks)).toEqual([
      { ...NOTHING_ATTEMPTED, ack_deposit_attempted: true },
      { ...NOTHING_ATTEMPTED, ack_deposit_attempted: true },
      { ...NOTHING_ATTEMPTED, ack_deposit_attempted: true, ack_withdraw_attempted: true },
    ]);
    const rejected = transfers.map(({ reason }) => ({
      status: 'Finalized',
      createdTokenAccount: 'NotRequired',
      result: { kind: 'Rejected', reason },
    }));
    expect(withdrawTracker(bridge).entries).toMatchObject(rejected);

    // No claim: a Rejected result is relayable at once (rule 3.1). Authority 0's yes reaches the threshold;
    // authority 1, with the Finalized entries in its read, votes late. Each crank cleans up its turns
    // (docs/crank.md "Cleanup turns": entry i is the first voter's from slot i mod 3 on). Authority 1's
    // read holds no vote of its own yet, so entry 1 reads as authority 2's turn to it and it cleans up
    // nothing; authority 2's read holds authority 1's late vote: entry 2 is its turn, entry 1 authority 1's.
    // The next round cleans up the rest: entries 0 and 3 (authority 0's) and 1.
    expect(depositTracker(bridge).entries.map((entry) => entry.status)).toEqual(['Relaying', 'Relaying', 'Relaying', 'Relaying']);
    expect(await runRoundCaughtUp(cranks)).toEqual([
      { ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true },
      { ...NOTHING_ATTEMPTED, ack_withdraw_attempted: true },
      { ...NOTHING_ATTEMPTED, cleanup_attempted: 1, cleanup_completed: 1 },
    ]);
    expect(await runRound(cranks)).toEqual([
      { ...NOTHING_ATTEMPTED, cleanup_attempted: 2, cleanup_completed: 2 },
      { ...NOTHING_ATTEMPTED, cleanup_attempted: 1, cleanup_completed: 1 },
      NOTHING_ATTEMPTED,
    ]);
    expect(depositTracker(bridge).entries).toMatchObject(
      transfers.map(({ amount, reason }) => ({
        status: 'Finalized',
        result: { kind: 'Rejected', reason },
        cleanupCompleted: true,
        refundedAmount: amount,
      })),
    );
    expectSettled(bridge, transfers.length);
    await expectTransactionsAccounted(bridge, cranks);
  });

  it('Rejected(InternalError), which no instruction can cause: a TokenPair that does not decode, seeded into the ledger', async () => {
    bridge = await startDevnetBridge();
    const cranks = await startBridgeCranks(bridge, [0, 1, 2]);
    // The program writes only valid pairs; an account at the PDA, owned by the program, with the
    // wrong discriminator is what it reports as its own fault.
    const mint = Keypair.generate().publicKey;
    const journal = bridge.pair.target.bank.journal();
    journal.create(tokenPairAddress(bridge.programId, bridge.world.source.chainId, mint).toBase58(), {
      lamports: 1_000_000n,
      owner: bridge.programId.toBase58(),
      data: new Uint8Array(TOKEN_PAIR_SIZE),
      executable: false,
    });
    journal.commit();
    await deposit(bridge, { amount: 250n, sourceMint: mint.toBase58() });

    await runRound(cranks);
    const internalError: DepositResult = { kind: 'Rejected', reason: 'InternalError' };
    expect(withdrawTracker(bridge).entries[0]).toMatchObject({ status: 'Finalized', result: internalError, createdTokenAccount: 'NotRequired' });
    await runRoundCaughtUp(cranks);
    // The cleanup is the turn of the first voter from slot 0 on; that crank's read in the round may have come before the threshold.
    await runRoundCaughtUp(cranks);
    expect(depositTracker(bridge).entries[0]).toMatchObject({ result: internalError, cleanupCompleted: true, refundedAmount: 250n });
    expectSettled(bridge, 1);
    await expectTransactionsAccounted(bridge, cranks);
  });
});
