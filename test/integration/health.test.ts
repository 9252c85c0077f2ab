import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, type LogRecord } from '../support/server-process.js';
import {
  crankOnce,
  landedSignatures,
  scrapedSample as metric,
  serverHealth,
  startAuthorityServer,
  type AuthorityServer,
} from './support/authority-server.js';
import { NOTHING_ATTEMPTED, startBridgeCrank } from './support/cranks.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { deposit } from './support/transactions.js';

/**
 * /health against the devnet. Second signer: two real servers (`node dist/index.js`) signing
 * with the same authority key, their cycles driven by POST /crank/once. Fee balance: the real
 * crank and chain client for an authority whose destination balance is tiny.
 */

let bridge: DevnetBridge | undefined;

beforeAll(() => {
  ensureBuilt();
}, 120_000);

afterEach(async () => {
  await bridge?.close();
  bridge = undefined;
});

/**
 * A server for authority 0; its cycles run on POST /crank/once only (the poll interval is an
 * hour). No handoff (BRIDGE_HANDOFF_SECS=0): both servers sign from the start, as two instances
 * did before handoffs existed; test/integration/handoff-rollout.test.ts and handoff-takeover.test.ts cover the handoff.
 */
function startServer(b: DevnetBridge, env: Record<string, string> = {}): Promise<AuthorityServer> {
  return startAuthorityServer(b, { BRIDGE_POLL_INTERVAL_SECS: '3600', BRIDGE_HANDOFF_SECS: '0', ...env });
}

const foreignLines = (server: AuthorityServer): LogRecord[] =>
  server.process.logs().filter((record) => record['level'] === 'error' && typeof record['signature'] === 'string');

async function newDeposit(b: DevnetBridge, amount: bigint): Promise<void> {
  await deposit(b, { amount, sourceMint: b.world.tokenPairs.normal.sourceMint });
}

describe('second signer: two servers with one key', () => {
  it("continue: the one that sees the other's transaction reports it (degraded, last_error, error log, metric) and keeps voting", async () => {
    const b = (bridge = await startDevnetBridge());
    const [first, second] = await Promise.all([startServer(b), startServer(b)]);
    // Past their startup cycles: each has set the baseline of the key's history.
    await Promise.all([crankOnce(first.url), crankOnce(second.url)]);
    expect(await serverHealth(first)).toMatchObject({ code: 200, status: 'ok', lastError: null });

    await newDeposit(b, 100n);
    expect(await crankOnce(first.url)).toMatchObject({ ack_deposit_attempted: true });
    const [firstVote] = landedSignatures(first, 'ack_deposit');
    // The key's position moved: the second server has nothing to vote, and sees who moved it.
    expect(await crankOnce(second.url)).toEqual({ ...NOTHING_ATTEMPTED, role: 'active' });
    const seen = await serverHealth(second);
    expect(seen).toMatchObject({ code: 200, status: 'degraded' });
    expect(seen.lastError).toMatch(
      new RegExp(
        `^transaction ${firstVote} on the destination chain \\(slot \\d+\\) was signed with this authority's key but not by this server: .*SPEC §8`,
      ),
    );
    expect(foreignLines(second)).toEqual([expect.objectContaining({ chain: 'target', signature: firstVote, halted: false })]);
    expect(await metric(second, 'bridge_foreign_signatures_total{chain="target"}')).toBe(1);
    expect(await metric(second, 'bridge_health_status{status="degraded"}')).toBe(1);
    expect(await serverHealth(first)).toMatchObject({ status: 'ok' });

    // Default: the second server keeps voting; now the first one sees it.
    await newDeposit(b, 200n);
    expect(await crankOnce(second.url)).toMatchObject({ ack_deposit_attempted: true });
    const [secondVote] = landedSignatures(second, 'ack_deposit');
    await crankOnce(first.url);
    expect(await serverHealth(first)).toMatchObject({ status: 'degraded', lastError: expect.stringContaining(secondVote!) });
    expect(foreignLines(first).map((record) => record['signature'])).toEqual([secondVote]);
    // Each foreign signature is logged once, however many cycles follow.
    await crankOnce(second.url);
    expect(foreignLines(second)).toHaveLength(1);
  }, 60_000);

  it('halt: after seeing the other signer, a server submits nothing more until restart; cycles still read and report', async () => {
    const b = (bridge = await startDevnetBridge());
    const [voter, halting] = await Promise.all([startServer(b), startServer(b, { BRIDGE_ON_FOREIGN_SIGNER: 'halt' })]);
    await Promise.all([crankOnce(voter.url), crankOnce(halting.url)]);

    await newDeposit(b, 100n);
    expect(await crankOnce(voter.url)).toMatchObject({ ack_deposit_attempted: true });
    expect(await crankOnce(halting.url)).toEqual({ ...NOTHING_ATTEMPTED, role: 'active' });
    expect(foreignLines(halting)).toEqual([expect.objectContaining({ chain: 'target', halted: true })]);

    await newDeposit(b, 200n);
    const runsBefore = await metric(halting, 'bridge_crank_cycles_total{outcome="ok"}');
    expect(await crankOnce(halting.url)).toEqual({ ...NOTHING_ATTEMPTED, role: 'active' });
    expect(await metric(halting, 'bridge_crank_cycles_total{outcome="ok"}')).toBe(runsBefore! + 1);
    expect(await metric(halting, 'bridge_crank_pending_entries{action="ack_deposit"}')).toBe(1);
    expect(landedSignatures(halting, 'ack_deposit')).toEqual([]);
    const halted = await serverHealth(halting);
    expect(halted).toMatchObject({ code: 200, status: 'degraded' });
    expect(halted.lastError).toMatch(/submits nothing until it is restarted \(BRIDGE_ON_FOREIGN_SIGNER=halt\)$/);
    // The other server, in the default mode, votes on.
    expect(await crankOnce(voter.url)).toMatchObject({ ack_deposit_attempted: true });
  }, 60_000);
});

describe('fee balance', () => {
  it('an authority that cannot pay the destination fees sends nothing there, says so, and resumes once funded', async () => {
    const b = (bridge = await startDevnetBridge());
    const crank = startBridgeCrank(b, 0);
    await crank.service.runOnce();
    // A tiny balance: less than one transaction's 5000-lamport fee (the plan also counts a
    // priority fee of up to the 100,000 cap on one vote's default 200,000 CU: 20,000).
    const key = b.authorities[0]!.publicKey.toBase58();
    const journal = b.pair.target.bank.journal();
    journal.setLamports(key, 4_000n);
    journal.commit();

    await newDeposit(b, 100n);
    expect(await crank.service.runOnce()).toEqual(NOTHING_ATTEMPTED);
    expect(crank.service.status()).toBe('degraded');
    expect(crank.service.health().last_error).toBe(
      "the authority holds 4000 lamports on the destination chain, less than the 25000 lamports this cycle's transactions there need in fees: nothing is sent there until it is funded",
    );
    expect(b.pair.target.getAccount(key)!.lamports).toBe(4_000n);

    b.pair.target.airdrop(key, 1_000_000);
    // The crank reads the balance at confirmed: the airdrop must reach that bank first.
    b.pair.target.advanceSlots(b.pair.target.bank.commitmentLags.confirmedLagSlots);
    expect(await crank.service.runOnce()).toMatchObject({ ack_deposit_attempted: true });
    expect(crank.service.status()).toBe('ok');
    expect(b.pair.target.getAccount(key)!.lamports).toBe(1_004_000n - 5_000n);
  }, 60_000);
});
