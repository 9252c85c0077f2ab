import { SystemProgram } from '@solana/web3.js';
import { afterEach, describe, expect, it } from 'vitest';
import { devnetConnection, submitTransaction } from '../../devnet/world/submit.js';
import { metricValue } from '../support/metric-value.js';
import { nextIndexOf, withdrawTracker } from './support/chain-state.js';
import { startBridgeCrank, type BridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { initNonces } from './support/nonces.js';
import { deposit } from './support/transactions.js';

/**
 * Second-signer detection against the devnet over real HTTP (issue 31): the nonces with no
 * history at all, which only raise a doubt (issue 39: a move is no proof without the
 * transaction that made it); and the authority key's history (the security review), where transfers
 * that merely name the key cannot hide a twin's transaction, and a lying history node's forged
 * "authority" transactions neither halt the server nor poison the reads after them.
 */

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

/** Authority 0's crank, halting on another signer, with the production handoff off (devnet: one server per authority). */
async function haltingCrank(b: DevnetBridge): Promise<BridgeCrank> {
  const crank = startBridgeCrank(b, 0, { config: { onForeignSigner: 'halt', handoffMs: 0 } });
  await crank.service.runOnce();
  return crank;
}

/** `count` real 1-lamport transfers from the user to authority 0 on the destination chain: anyone can make them. */
async function spamTransfers(b: DevnetBridge, count: number): Promise<void> {
  const signal = AbortSignal.timeout(30_000);
  const connection = devnetConnection(b.pair.target.url, signal);
  const transfer = () => SystemProgram.transfer({ fromPubkey: b.user.publicKey, toPubkey: b.authorities[0]!.publicKey, lamports: 1 });
  for (let i = 0; i < count; i++) await submitTransaction(connection, [transfer()], [b.user], { chain: 'target', step: `transfer ${i}`, signal });
}

const foreignSignatures = (crank: BridgeCrank) => metricValue(crank.metrics.foreignSignatures, { chain: 'target' });
const haltedLines = (crank: BridgeCrank) => crank.logs.records().filter((record) => record['halted'] === true);

describe('the nonces without history', () => {
  it("without any history: a twin's votes move the shared nonce, but nothing proves who signed: no halt, each move counted as unverified evidence with a warn line", async () => {
    const b = (bridge = await startDevnetBridge());
    await initNonces(b, [0]);
    for (const node of [b.pair.source, b.pair.target]) node.faults.set({ noHistory: true });
    const a = await haltingCrank(b);
    expect(a.service.health().landing_mode).toEqual({ source: 'nonce', target: 'nonce' });
    const twin = await haltingCrank(b);
    for (const [i, amount] of [100n, 101n].entries()) {
      await deposit(b, { amount, sourceMint: b.world.tokenPairs.normal.sourceMint });
      await twin.service.runOnce();
      expect(nextIndexOf(withdrawTracker(b), b, 0)).toBe(i + 1);
      await a.service.runOnce();
    }
    await a.service.runOnce();
    expect(await foreignSignatures(a)).toBe(0);
    expect(haltedLines(a)).toEqual([]);
    // The first move is from the value a first saw (its previous life's, perhaps): excused; the second is a doubt.
    expect(await metricValue(a.metrics.signerEvidenceUnverified, { chain: 'target' })).toBe(1);
    expect(a.logs.records()).toContainEqual(
      expect.objectContaining({ level: 'warn', chain: 'target', moves: [expect.objectContaining({ slot: expect.any(Number) })] }),
    );
    expect(a.service.status()).toBe('ok');
    expect(await foreignSignatures(twin)).toBe(0);
  }, 60_000);
});

describe('the authority history as a second signal', () => {
  it("30 transfers naming the key after a twin's vote (3 s of ~10 a second) do not hide the vote: the instance halts", async () => {
    // At 50 ms slots, as the scenario was measured: at the suite's 20 ms the one cycle after the
    // spam found no foreign signature (2 of 2 runs; not pinned down, see the issue note).
    const b = (bridge = await startDevnetBridge({ slotIntervalMs: 50 }));
    const a = await haltingCrank(b);
    // The twin: a second process with the same key.
    const twin = await haltingCrank(b);
    await deposit(b, { amount: 100n, sourceMint: b.world.tokenPairs.normal.sourceMint });
    await twin.service.runOnce();
    expect(nextIndexOf(withdrawTracker(b), b, 0)).toBe(1);
    // Before: only the newest 8 entries were looked up, so the twin's vote sat in an unchecked tail.
    await spamTransfers(b, 30);

    await a.service.runOnce();
    expect(await foreignSignatures(a)).toBe(1);
    expect(haltedLines(a)).toHaveLength(1);
    expect(a.service.status()).toBe('degraded');
  }, 60_000);

  it("a lying history node's forged authority transactions are ignored and counted; the reads after them still find a real twin", async () => {
    const b = (bridge = await startDevnetBridge());
    const a = await haltingCrank(b);
    b.pair.target.faults.set({ forgedHistory: { address: b.authorities[0]!.publicKey.toBase58(), transactions: 50 } });
    await deposit(b, { amount: 100n, sourceMint: b.world.tokenPairs.normal.sourceMint });

    await a.service.runOnce();
    expect(await metricValue(a.metrics.historyUnverified, { chain: 'target' })).toBe(50);
    expect(await foreignSignatures(a)).toBe(0);
    expect(nextIndexOf(withdrawTracker(b), b, 0)).toBe(1);
    await a.service.runOnce();
    expect(await metricValue(a.metrics.historyUnverified, { chain: 'target' })).toBe(50);
    expect(a.service.status()).toBe('ok');

    const twin = await haltingCrank(b);
    await deposit(b, { amount: 101n, sourceMint: b.world.tokenPairs.normal.sourceMint });
    await twin.service.runOnce();
    expect(nextIndexOf(withdrawTracker(b), b, 0)).toBe(2);
    await a.service.runOnce();
    expect(await foreignSignatures(a)).toBe(1);
    expect(haltedLines(a)).toHaveLength(1);
  }, 60_000);
});
