import { readFileSync } from 'node:fs';
import bs58 from 'bs58';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { serverEnv } from '../../devnet/server-env.js';
import { ops } from '../ops/ops-cli.js';
import { AWS_SECRET, startKeyServiceFake, VAULT_TOKEN, type KeyServiceFake, type KeyServiceName } from '../support/key-service-fakes.js';
import { fixtureKeypairBytes } from '../support/keypair-files.js';
import { leakedFragments } from '../support/secret-fragments.js';
import { ensureBuilt, ServerProcess } from '../support/server-process.js';
import { crankOnce } from './support/authority-server.js';
import { votersMask, withdrawTracker } from './support/chain-state.js';
import { startDevnetBridge, type DevnetBridge } from './support/devnet-bridge.js';
import { deposit } from './support/transactions.js';

/**
 * Issue 32: real servers (`node dist/index.js`) whose authority key is in AWS KMS, Google Cloud
 * KMS or Vault transit (each a local fake speaking the service's wire protocol, reached through
 * the platform's client and standard credential chain) land their votes on the devnet; `ops
 * signer` prints the key to register; and no start-up error, of the server or of the ops CLI,
 * prints any fragment of a secret.
 */

const SERVICES: KeyServiceName[] = ['aws-kms', 'gcp-kms', 'vault-transit'];
// Nothing answers here: the refusals happen before any RPC call.
const UNREACHABLE_RPC = { BRIDGE_SOURCE_RPC_URL: 'http://127.0.0.1:9', BRIDGE_TARGET_RPC_URL: 'http://127.0.0.1:9', BRIDGE_SOURCE_CHAIN_ID: '1', BRIDGE_TARGET_CHAIN_ID: '2' };
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

function startServer(env: Record<string, string>): ServerProcess {
  const server = new ServerProcess({ BRIDGE_POLL_INTERVAL_SECS: '3600', BRIDGE_RPC_TIMEOUT_MS: '5000', ...env });
  servers.push(server);
  return server;
}

describe.each(SERVICES)('a server whose authority key is in %s', (service) => {
  it('votes through it and the vote lands on the devnet; /health, the startup line and ops name the signer and key, never a credential', async () => {
    const b = (bridge ??= await startDevnetBridge());
    const authority = b.authorities[0]!;
    const fake = await startKeyServiceFake(service, authority);
    fakes.push(fake);
    const env = { ...serverEnv(b.world, 0, 0), ...fake.env, BRIDGE_AUTHORITY_KEYPAIR: fake.uri };
    const server = startServer(env);
    const url = await server.listening();
    const index = withdrawTracker(b).header.entryCount;
    await deposit(b, { amount: 500n, sourceMint: b.world.tokenPairs.normal.sourceMint });
    // The crank's start-up cycle may vote on the deposit before this request does: either way
    // one cycle after the deposit has voted, and the vote is on the chain.
    await crankOnce(url, CYCLE_TIMEOUT_MS);
    const afterCycle = (await (await fetch(`${url}/health`, { signal: AbortSignal.timeout(10_000) })).json()) as { crank: { total_actions_submitted: number } };
    expect(afterCycle.crank.total_actions_submitted).toBeGreaterThanOrEqual(1);
    expect(withdrawTracker(b).entries[Number(index)]).toMatchObject({ yesVotes: votersMask(0) });
    expect(fake.requests.filter((request) => /sign/i.test(request.operation)).length).toBeGreaterThanOrEqual(2);

    const started = await server.waitForLog((record) => record['msg'] === 'bridge server listening');
    expect(started['crank']).toMatchObject({ authority: authority.publicKey.toBase58(), signer: { kind: service, key: expect.any(String) } });
    const health = await (await fetch(`${url}/health`, { signal: AbortSignal.timeout(10_000) })).text();
    expect(JSON.parse(health)).toMatchObject({ crank: { signer: { kind: service } } });
    const printed = await ops(['signer'], { ...fake.env, BRIDGE_AUTHORITY_KEYPAIR: fake.uri });
    expect(printed).toMatchObject({ code: 0, stdout: expect.stringMatching(new RegExp(`^${authority.publicKey.toBase58()}\\n\\(held by the `)) });
    const everything = [server.stdout(), server.stderr(), health, printed.stdout, printed.stderr].join('\n');
    expect(leakedFragments(everything, credentialsOf(fake))).toEqual([]);
  }, 120_000);
});

describe('no start-up error prints a secret (server and ops CLI)', () => {
  const keyBytes = fixtureKeypairBytes();
  const pin = 'PINzq7&TAILsecret-DO-NOT-LEAK';
  const cases: [string, () => Promise<{ env: Record<string, string>; secrets: string[] }>][] = [
    ['the base58 secret key pasted', async () => ({ env: { BRIDGE_AUTHORITY_KEYPAIR: bs58.encode(Uint8Array.from(keyBytes)) }, secrets: [bs58.encode(Uint8Array.from(keyBytes))] })],
    ['the JSON array pasted', async () => ({ env: { BRIDGE_AUTHORITY_KEYPAIR: JSON.stringify(keyBytes) }, secrets: [JSON.stringify(keyBytes)] })],
    ['a PKCS#11 PIN with an unencoded &', async () => ({ env: { BRIDGE_AUTHORITY_KEYPAIR: `pkcs11:token=t;object=k?module-path=/nonexistent/lib.so&pin-value=${pin}` }, secrets: [pin, 'TAILsecret'] })],
    ...SERVICES.map((service): (typeof cases)[number] => [
      `${service} refusing the credentials' permission`,
      async () => {
        const fake = await startKeyServiceFake(service, (await import('@solana/web3.js')).Keypair.generate());
        fakes.push(fake);
        fake.fault = 'denied';
        return { env: { ...fake.env, BRIDGE_AUTHORITY_KEYPAIR: fake.uri }, secrets: credentialsOf(fake) };
      },
    ]),
  ];

  it.each(cases)('%s', async (_, setup) => {
    const { env, secrets } = await setup();
    const server = startServer({ ...UNREACHABLE_RPC, ...env });
    expect(await server.exited).toEqual({ code: 1, signal: null });
    const lines = withoutNodeVersionWarning(server.stderr()).split('\n').filter((line) => line !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.startsWith('BRIDGE_AUTHORITY_KEYPAIR: ')).toBe(true);
    const cli = await ops(['signer'], env);
    expect(cli.code).toBe(1);
    expect(withoutNodeVersionWarning(cli.stderr).startsWith('ops: BRIDGE_AUTHORITY_KEYPAIR: ')).toBe(true);
    expect(leakedFragments([server.stdout(), server.stderr(), cli.stdout, cli.stderr].join('\n'), secrets)).toEqual([]);
  }, 60_000);
});

/** What authenticates to the fake: the secret key, the private key of the service account file, the token. */
function credentialsOf(fake: KeyServiceFake): string[] {
  if (fake.env['AWS_SECRET_ACCESS_KEY'] !== undefined) return [AWS_SECRET];
  if (fake.env['VAULT_TOKEN'] !== undefined) return [VAULT_TOKEN];
  const file = JSON.parse(readFileSync(fake.env['GOOGLE_APPLICATION_CREDENTIALS']!, 'utf8')) as { private_key: string };
  return [file.private_key.replace(/-----[A-Z ]+-----/g, '')];
}

/**
 * AWS's client warns once, through process.emitWarning, that its releases after January 2027
 * need Node 22: Node's own warning, not the server's output, and left for the operator to see.
 */
function withoutNodeVersionWarning(stderr: string): string {
  return stderr.replace(/\(node:\d+\) Warning: NodeVersionSupportWarning[\s\S]*?--trace-warnings[^\n]*\n/, '');
}
