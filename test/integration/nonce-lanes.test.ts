import { ComputeBudgetProgram, Keypair, PublicKey, SystemProgram, type TransactionInstruction } from '@solana/web3.js';
import { Registry } from 'prom-client';
import { FileKeySigner } from '../../src/signer/file-key-signer.js';
import { createBridgeChains } from '../../src/chain/client/create-chain-client.js';
import { ownNextIndex } from '../../src/chain/port/authority-position.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { captureLogs } from '../support/log-capture.js';
import { afterEach, describe, expect, it } from 'vitest';
import { NONCE_ACCOUNT_RENT_LAMPORTS, nonceAddress } from '../../src/chain/nonce-account.js';
import type { RpcFetch } from '../../src/chain/rpc/rpc-fetch.js';
import { devnetConnection, submitTransaction } from '../../devnet/world/submit.js';
import { metricValue } from '../support/metric-value.js';
import { waitFor } from '../support/wait-for.js';
import { nextIndexOf, withdrawTracker } from './support/chain-state.js';
import { startBridgeCrank, type BridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { initNonces } from './support/nonces.js';
import { deposit } from './support/transactions.js';

/**
 * Nonce accounts that change under the server, and versions the crank no longer wants (issue
 * 39 items 5 and 6; docs/chain-client.md, "Bounded in flight" and "Lanes out of use"), on the
 * devnet over real HTTP: a lane closed or re-authorized while a vote waits on it ends that
 * attempt at once (not `unknown` after the confirmation timeout), one error line names it, the
 * other lane carries the vote; a version left in flight is voided at the next read.
 */

let bridge: DevnetBridge | undefined;

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

const errorLines = (crank: BridgeCrank) => crank.logs.records().filter((record) => record.level === 'error');
const inFlight = (crank: BridgeCrank) => crank.service.health().versions_in_flight?.target ?? 0;
const normal = (b: DevnetBridge) => b.world.tokenPairs.normal.sourceMint;

/** The authority's own transaction on the destination chain, priced above any floor the test sets. */
async function authoritySends(b: DevnetBridge, instruction: TransactionInstruction, step: string): Promise<void> {
  const signal = AbortSignal.timeout(20_000);
  const priced = [ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 50_000 }), instruction];
  await submitTransaction(devnetConnection(b.pair.target.url, signal), priced, [b.authorities[0]!], { chain: 'target', step, signal });
}

const CHANGES = {
  closed: (b: DevnetBridge, lane: Keypair['publicKey']) =>
    SystemProgram.nonceWithdraw({
      noncePubkey: lane,
      authorizedPubkey: b.authorities[0]!.publicKey,
      toPubkey: b.authorities[0]!.publicKey,
      lamports: NONCE_ACCOUNT_RENT_LAMPORTS,
    }),
  're-authorized': (b: DevnetBridge, lane: Keypair['publicKey']) =>
    SystemProgram.nonceAuthorize({
      noncePubkey: lane,
      authorizedPubkey: b.authorities[0]!.publicKey,
      newAuthorizedPubkey: Keypair.generate().publicKey,
    }),
} as const;

/** Records the wire of every transaction the crank sends. */
function recordingSends(wires: string[]): RpcFetch {
  return async (input, init) => {
    const body = JSON.parse(String(init?.body)) as { method: string; params: [string] };
    if (!Array.isArray(body) && body.method === 'sendTransaction') wires.push(body.params[0]);
    return globalThis.fetch(input, init);
  };
}

describe('nonce accounts that change under the server', () => {
  it.each(Object.keys(CHANGES) as Array<keyof typeof CHANGES>)(
    'a lane %s while a vote waits on it: the attempt ends at once, one error line names the account and the fix, the other lane lands the vote',
    async (change) => {
      const b = (bridge = await startDevnetBridge());
      await initNonces(b, [0]);
      // A price cap no slot clears while the floor is up: the vote waits, in flight.
      const a = startBridgeCrank(b, 0, { priorityFee: { minMicroLamports: 0, maxMicroLamports: 1 }, confirmTimeoutMs: 60_000 });
      await a.service.runOnce();
      const lane = nonceAddress(b.authorities[0]!.publicKey, b.world.target.chainId, 0);
      b.pair.target.faults.set({ priceFloor: 1_000 });
      await deposit(b, { amount: 100n, sourceMint: normal(b) });
      const started = performance.now();
      const cycle = a.service.runOnce();
      await waitFor(() => inFlight(a) > 0, { timeoutMs: 10_000, what: 'the vote in flight' });
      await authoritySends(b, CHANGES[change](b, lane), `the lane ${change}`);
      b.pair.target.faults.set({ priceFloor: 0 });
      await cycle;
      expect(performance.now() - started).toBeLessThan(20_000);
      expect(nextIndexOf(withdrawTracker(b), b, 0)).toBe(1);
      expect(errorLines(a)).toEqual([
        expect.objectContaining({ account: lane.toBase58(), chain: 'target', msg: expect.stringContaining('its lane is out of use') }),
      ]);
      expect(a.service.health().landing_mode).toEqual({ source: 'nonce', target: 'nonce' });
      expect(inFlight(a)).toBe(0);
      // The operator's change to its own pool is not a second signer.
      expect(await metricValue(a.metrics.foreignSignatures, { chain: 'target' })).toBe(0);
    },
    60_000,
  );

  it('both destination lanes closed: blockhash mode at the next cycle, `landing_mode` says so, the votes still land', async () => {
    const b = (bridge = await startDevnetBridge());
    await initNonces(b, [0]);
    const a = startBridgeCrank(b, 0);
    await a.service.runOnce();
    for (const position of [0, 1])
      await authoritySends(b, CHANGES.closed(b, nonceAddress(b.authorities[0]!.publicKey, b.world.target.chainId, position)), 'close a lane');
    await deposit(b, { amount: 100n, sourceMint: normal(b) });
    await a.service.runOnce();
    expect(a.service.health().landing_mode).toEqual({ source: 'nonce', target: 'blockhash' });
    expect(
      errorLines(a)
        .map((line) => line.account)
        .sort(),
    ).toEqual([0, 1].map((position) => nonceAddress(b.authorities[0]!.publicKey, b.world.target.chainId, position).toBase58()).sort());
    expect(nextIndexOf(withdrawTracker(b), b, 0)).toBe(1);
  }, 60_000);
});

describe('versions the crank no longer wants', () => {
  it('a version left in flight by an attempt that ended unknown is voided at the next read: /health showed it, a copy sent later cannot land, the vote lands once', async () => {
    const b = (bridge = await startDevnetBridge());
    await initNonces(b, [0]);
    const wires: string[] = [];
    const a = startBridgeCrank(b, 0, { fetch: recordingSends(wires), confirmTimeoutMs: 1_000, maxAttempts: 1 });
    await a.service.runOnce();
    // Every send of this attempt is accepted and lost: from the crank's side the versions may still land.
    b.pair.target.faults.set({ dropTransactions: 10_000 });
    await deposit(b, { amount: 100n, sourceMint: normal(b) });
    await a.service.runOnce();
    expect(inFlight(a)).toBeGreaterThan(0);
    const leftInFlight = [...wires];
    b.pair.target.faults.set({ dropTransactions: 0 });

    await a.service.runOnce();
    expect(a.logs.records()).toContainEqual(expect.objectContaining({ chain: 'target', msg: expect.stringContaining('is voided') }));
    expect(nextIndexOf(withdrawTracker(b), b, 0)).toBe(1);
    expect(inFlight(a)).toBe(0);
    const connection = devnetConnection(b.pair.target.url, AbortSignal.timeout(10_000));
    const signatures = await Promise.all(
      leftInFlight.map((wire) => connection.sendRawTransaction(Buffer.from(wire, 'base64'), { skipPreflight: true })),
    );
    await a.service.runOnce();
    const statuses = await connection.getSignatureStatuses(signatures, { searchTransactionHistory: true });
    expect(statuses.value.filter((status) => status !== null)).toEqual([]);
    expect(nextIndexOf(withdrawTracker(b), b, 0)).toBe(1);
    expect(await metricValue(a.metrics.foreignSignatures, { chain: 'target' })).toBe(0);
    expect(await metricValue(a.metrics.signerEvidenceUnverified, { chain: 'target' })).toBe(0);
  }, 60_000);
});

describe('voidInFlight, for shutdown', () => {
  it('voids every nonce-mode transaction in flight and waits for each outcome: unresolved 0, and a copy of a version sent afterwards cannot land', async () => {
    const b = (bridge = await startDevnetBridge());
    await initNonces(b, [0]);
    const wires: string[] = [];
    const programId = new PublicKey(b.world.programId);
    const chains = createBridgeChains(
      {
        sourceRpcUrl: b.pair.source.url,
        targetRpcUrl: b.pair.target.url,
        sourceChainId: b.world.source.chainId,
        targetChainId: b.world.target.chainId,
        sourceProgramId: programId,
        targetProgramId: programId,
        signer: new FileKeySigner(b.authorities[0]!),
        rpcTimeoutMs: 5_000,
        sourceReadCommitment: 'confirmed',
        priorityFee: { minMicroLamports: 0, maxMicroLamports: 100_000 },
        nonceAccounts: 2,
        metrics: createMetrics(new Registry()),
        logger: captureLogs('info').logger,
      },
      { submitTiming: { pollIntervalMs: 10, rebroadcastIntervalMs: 100, confirmTimeoutMs: 1_000 }, fetch: recordingSends(wires) },
    );
    await deposit(b, { amount: 100n, sourceMint: normal(b) });
    const view = await chains.readState(AbortSignal.timeout(10_000), { entriesPerPosition: 16 });
    expect(chains.lifetimeModes().target).toBe('nonce');
    const next = ownNextIndex(view.withdrawals.header, view.authority, { chain: 'target' });
    const entry = view.deposits.entries.get(next)!;
    const vote = { index: next, approve: true, amount: entry.amount.toString(), recipient: entry.recipient, sourceMint: entry.sourceMint };
    b.pair.target.faults.set({ dropTransactions: 10_000 });
    await expect(chains.ackDeposits([vote], AbortSignal.timeout(10_000))).rejects.toMatchObject({ context: { outcome: 'unknown' } });
    expect(chains.versionsInFlight().target).toBeGreaterThan(0);
    const leftInFlight = [...wires];
    b.pair.target.faults.set({ dropTransactions: 0 });

    const settled = await chains.voidInFlight(AbortSignal.timeout(10_000));
    expect(settled).toEqual({ source: { voided: 0, landed: 0, unresolved: 0 }, target: { voided: 1, landed: 0, unresolved: 0 } });
    expect(chains.versionsInFlight()).toEqual({ source: 0, target: 0 });
    const connection = devnetConnection(b.pair.target.url, AbortSignal.timeout(10_000));
    const signatures = await Promise.all(
      leftInFlight.map((wire) => connection.sendRawTransaction(Buffer.from(wire, 'base64'), { skipPreflight: true })),
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const statuses = await connection.getSignatureStatuses(signatures, { searchTransactionHistory: true });
    expect(statuses.value.filter((status) => status !== null)).toEqual([]);
    expect(nextIndexOf(withdrawTracker(b), b, 0)).toBe(0);
  }, 60_000);
});
