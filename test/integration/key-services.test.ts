import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { serverEnv } from '../../devnet/server-env.js';
import { ops } from '../ops/ops-cli.js';
import { credentialsOf, startKeyServiceFake, type KeyServiceFake, type KeyServiceName } from '../support/key-service-fakes.js';
import { leakedFragments } from '../support/secret-fragments.js';
import { ensureBuilt, ServerProcess } from '../support/server-process.js';
import { waitFor } from '../support/wait-for.js';
import { crankOnce } from './support/authority-server.js';
import { votersMask, withdrawTracker } from './support/chain-state.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { deposit } from './support/transactions.js';

/**
 * Issue 32: real servers (`node dist/index.js`) whose authority key is in AWS KMS, Google Cloud
 * KMS or Vault transit (each a local fake speaking the service's wire protocol, reached through
 * the platform's client and standard credential chain) land their votes on the devnet; `ops
 * signer` prints the key to register; no output prints any fragment of a credential, and the
 * public /health names the kind of signer, not the key (issue 40). The failures each start-up
 * exits with: key-service-errors.test.ts.
 */

const SERVICES: KeyServiceName[] = ['aws-kms', 'gcp-kms', 'vault-transit'];
const CYCLE_TIMEOUT_MS = 30_000;

let bridge: DevnetBridge | undefined;
const fakes: KeyServiceFake[] = [];
const servers: ServerProcess[] = [];

beforeAll(() => {
  ensureBuilt();
}, 120_000);

afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
  for (const fake of fakes.splice(0)) await fake.close();
});

afterAll(async () => {
  await bridge?.close();
});

describe.each(SERVICES)('a server whose authority key is in %s', (service) => {
  it('votes through it and the vote lands on the devnet; the startup line and ops name the signer and key, /health the kind only, never a credential', async () => {
    const b = (bridge ??= await startDevnetBridge());
    const authority = b.authorities[0]!;
    const fake = await startKeyServiceFake(service, authority);
    fakes.push(fake);
    const env = { ...serverEnv(b.world, 0, 0), ...fake.env, BRIDGE_AUTHORITY_KEYPAIR: fake.uri };
    const server = new ServerProcess({ BRIDGE_POLL_INTERVAL_SECS: '3600', BRIDGE_RPC_TIMEOUT_MS: '5000', ...env });
    servers.push(server);
    const url = await server.listening();
    const index = withdrawTracker(b).header.entryCount;
    await deposit(b, { amount: 500n, sourceMint: b.world.tokenPairs.normal.sourceMint });
    // The crank's start-up cycle may vote on the deposit before this request does: either way
    // one cycle after the deposit has voted, and the vote is on the chain.
    await crankOnce(url, CYCLE_TIMEOUT_MS);
    const afterCycle = (await (await fetch(`${url}/health`, { signal: AbortSignal.timeout(10_000) })).json()) as {
      crank: { total_actions_submitted: number };
    };
    expect(afterCycle.crank.total_actions_submitted).toBeGreaterThanOrEqual(1);
    expect(withdrawTracker(b).entries[Number(index)]).toMatchObject({ yesVotes: votersMask(0) });
    expect(fake.requests.filter((request) => /sign/i.test(request.operation)).length).toBeGreaterThanOrEqual(2);

    const started = await server.waitForLog((record) => record['msg'] === 'bridge server listening');
    expect(started['crank']).toMatchObject({ authority: authority.publicKey.toBase58(), signer: { kind: service, key: expect.any(String) } });
    const health = await (await fetch(`${url}/health`, { signal: AbortSignal.timeout(10_000) })).text();
    // The public /health names the kind of signer, never the key's ARN, resource name or path.
    expect((JSON.parse(health) as { crank: { signer: unknown } }).crank.signer).toEqual({ kind: service });
    expect(health).not.toContain((started['crank'] as { signer: { key: string } }).signer.key);
    const printed = await ops(['signer'], { ...fake.env, BRIDGE_AUTHORITY_KEYPAIR: fake.uri });
    expect(printed).toMatchObject({ code: 0, stdout: expect.stringMatching(new RegExp(`^${authority.publicKey.toBase58()}\\n\\(held by the `)) });
    const everything = [server.stdout(), server.stderr(), health, printed.stdout, printed.stderr].join('\n');
    expect(leakedFragments(everything, credentialsOf(fake))).toEqual([]);
  }, 120_000);
});

describe('a server whose Vault token is renewable (issue 40 item 6)', () => {
  it('counts every renewal in /metrics from the start, and a failed one is one warn line that names neither the token nor a control character', async () => {
    const b = (bridge ??= await startDevnetBridge());
    const fake = await startKeyServiceFake('vault-transit', b.authorities[0]!);
    fakes.push(fake);
    fake.vault.ttlSecs = 2;
    const env = { ...serverEnv(b.world, 0, 0), ...fake.env, BRIDGE_AUTHORITY_KEYPAIR: fake.uri };
    const server = new ServerProcess({ BRIDGE_POLL_INTERVAL_SECS: '3600', BRIDGE_RPC_TIMEOUT_MS: '5000', ...env });
    servers.push(server);
    const url = await server.listening();
    let metrics = '';
    const renewals = async (): Promise<Record<string, number>> => {
      metrics = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
      return Object.fromEntries(
        [...metrics.matchAll(/^bridge_signer_token_renewals_total\{outcome="(\w+)"\} (\d+)$/gm)].map(([, outcome, count]) => [
          outcome,
          Number(count),
        ]),
      );
    };
    // Renewed at half of each 2 s lease, counted once the server observes the signer.
    await waitFor(async () => ((await renewals())['renewed'] ?? 0) >= 1, { timeoutMs: 10_000, what: 'a renewal counted in /metrics' });
    expect(await renewals()).toMatchObject({ not_extended: 0, failed: 0 });
    // The next renewal meets a 500 whose message holds control characters.
    fake.fault = 'garbled';
    const warned = await server.waitForLog((record) => record.level === 'warn' && String(record.msg).includes('could not be renewed'));
    expect(String(warned['reason'])).not.toMatch(/[\u0000-\u001f\u007f]/);
    // /metrics renders at most once a second (src/http/metrics-render.ts).
    await waitFor(async () => (await renewals())['failed'] === 1, { timeoutMs: 5_000, what: 'the failed renewal counted in /metrics' });
    const everything = [server.stdout(), server.stderr(), metrics].join('\n');
    expect(leakedFragments(everything, credentialsOf(fake))).toEqual([]);
  }, 120_000);
});
