import { NonceAccount } from '@solana/web3.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { leaseAddress } from '../../src/chain/lease-account.js';
import { sleep } from '../../src/time.js';
import { ensureBuilt } from '../support/server-process.js';
import { landedSignatures, serverHealth, type AuthorityServer } from './support/authority-server.js';
import type { DevnetBridge } from './support/devnet-bridge.js';
import { errorLines, metric, startBridge, startServer, steadyTraffic, UNCANCELLED, waitForRole } from './support/handoff.js';
import { startLyingEndpoint, type LyingEndpoint } from './support/lying-endpoint.js';

/**
 * The signing lease decided on proof, never on one endpoint's answer (docs/chain-client.md "The
 * lease"), between real servers (`node dist/index.js`) at a 2 s poll: a node in front of the
 * holder forging the lease cannot stand it down, and a node in front of a standby that says the
 * lease is free, swallows the taking and reports it landed cannot make it sign beside the holder.
 * The lying node is the server's first destination endpoint, the devnet itself its fallback.
 */

const POLL = { BRIDGE_POLL_INTERVAL_SECS: '2' };

beforeAll(() => {
  ensureBuilt();
}, 120_000);

async function lyingEndpoint(b: DevnetBridge): Promise<LyingEndpoint> {
  const authority = b.authorities[0]!.publicKey;
  const liar = await startLyingEndpoint(b.world.target.rpcUrl, leaseAddress(authority, b.world.source.chainId), authority);
  b.onClose(() => liar.close());
  return liar;
}

function behind(liar: LyingEndpoint, b: DevnetBridge): Record<string, string> {
  return { ...POLL, BRIDGE_TARGET_RPC_URL: liar.url, BRIDGE_TARGET_RPC_FALLBACK_URLS: b.world.target.rpcUrl };
}

/** The lease's nonce value on the chain (the devnet's ledger, not an endpoint); undefined when there is no lease. */
function leaseValue(b: DevnetBridge): string | undefined {
  const account = b.pair.target.getAccount(leaseAddress(b.authorities[0]!.publicKey, b.world.source.chainId).toBase58());
  return account === undefined || account.data.length === 0 ? undefined : NonceAccount.fromAccountData(Buffer.from(account.data)).nonce;
}

/** The servers' roles once a second, `count` times. */
async function sampleRoles(servers: AuthorityServer[], count: number): Promise<string[][]> {
  const samples: string[][] = [];
  for (let i = 0; i < count; i++) {
    samples.push(await Promise.all(servers.map(async (server) => (await serverHealth(server)).role)));
    await sleep(1_000, UNCANCELLED);
  }
  return samples;
}

describe.concurrent('the signing lease against one lying endpoint', () => {
  it('an endpoint forging the lease in front of the holder for 30 s: the holder stays active, keeps landing, 0 error lines; each forged read a doubt', async ({
    onTestFinished,
  }) => {
    const b = await startBridge(onTestFinished);
    const liar = await lyingEndpoint(b);
    const holder = await startServer(b, behind(liar, b));
    await waitForRole(holder, 'active', 15_000);
    const value = leaseValue(b);
    expect(value).toBeDefined();
    const traffic = steadyTraffic(b, 1_000);
    const landedBefore = landedSignatures(holder).length;

    // Another holder's value for 15 s, then an account of another program ("unusable") for 15 s.
    liar.says = 'made_up';
    const forged = await sampleRoles([holder], 15);
    liar.says = 'other_owner';
    forged.push(...(await sampleRoles([holder], 15)));
    liar.says = 'honest';
    await traffic.stop();

    expect(liar.lies).toBeGreaterThan(0);
    expect(forged.filter(([role]) => role !== 'active')).toEqual([]);
    expect(landedSignatures(holder).length).toBeGreaterThan(landedBefore);
    expect(errorLines(holder)).toEqual([]);
    expect(await metric(holder, 'bridge_crank_lease_events_total{outcome="doubt"}')).toBeGreaterThan(0);
    expect(await metric(holder, 'bridge_crank_lease_events_total{outcome="lost"}')).toBe(0);
    expect(leaseValue(b)).toBe(value);
    expect(await serverHealth(holder)).toMatchObject({ status: 'ok', role: 'active' });
    console.info(
      `forging endpoint: ${liar.lies} forged lease reads in 30 s, the holder landed ${landedSignatures(holder).length - landedBefore} votes meanwhile`,
    );
  }, 120_000);

  it("an endpoint in front of a standby saying the lease is free and swallowing its taking: never two active in 40 samples, the holder's lease intact after the standby's SIGTERM", async ({
    onTestFinished,
  }) => {
    const b = await startBridge(onTestFinished);
    const liar = await lyingEndpoint(b);
    const holder = await startServer(b, POLL);
    await waitForRole(holder, 'active', 15_000);
    const value = leaseValue(b);
    expect(value).toBeDefined();
    liar.says = 'deceive';
    const standby = await startServer(b, behind(liar, b));
    const traffic = steadyTraffic(b, 1_000);
    const samples = await sampleRoles([holder, standby], 40);
    await traffic.stop();

    expect(liar.lies).toBeGreaterThan(0);
    expect(samples.filter((roles) => roles.every((role) => role === 'active'))).toEqual([]);
    expect(samples.filter(([role]) => role !== 'active')).toEqual([]);
    expect(landedSignatures(standby)).toEqual([]);
    standby.process.child.kill('SIGTERM');
    expect(await standby.process.exited).toEqual({ code: 0, signal: null });
    expect(leaseValue(b)).toBe(value);
    expect(errorLines(holder)).toEqual([]);
    expect(errorLines(standby)).toEqual([]);
    expect(await metric(holder, 'bridge_foreign_signatures_total{chain="target"}')).toBe(0);
    expect(await serverHealth(holder)).toMatchObject({ status: 'ok', role: 'active' });
    const tries = standby.process.logs().filter((record) => String(record['msg']).startsWith('crank: the signing lease was not taken')).length;
    console.info(
      `lying endpoint in front of a standby: ${liar.lies} lies, ${liar.swallowed.length} transactions swallowed, ${tries} takings refused before sending`,
    );
  }, 120_000);
});
