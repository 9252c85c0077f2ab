import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ops } from '../ops/ops-cli.js';
import {
  AWS_KEY_ID,
  credentialsOf,
  startKeyServiceFake,
  VAULT_TOKEN,
  type KeyServiceFake,
  type KeyServiceName,
} from '../support/key-service-fakes.js';
import { fixtureKeypairBytes } from '../support/keypair-files.js';
import { leakedFragments } from '../support/secret-fragments.js';
import { ensureBuilt, ServerProcess } from '../support/server-process.js';
import { createSoftHsm, TOKEN_PIN } from '../support/softhsm.js';

/**
 * Every way a built server (`node dist/index.js`) can fail to open its key in a key service or
 * token exits 1 with one line naming BRIDGE_AUTHORITY_KEYPAIR and saying what to set: no stack
 * trace, no fragment of a secret (issues 32 and 40). Each service is its local fake
 * (test/support/key-service-fakes.ts); the process never looks beyond loopback for credentials.
 */

const SERVICES: KeyServiceName[] = ['aws-kms', 'gcp-kms', 'vault-transit'];
// Nothing answers here: the refusals happen before any RPC call.
const UNREACHABLE_RPC = {
  BRIDGE_SOURCE_RPC_URL: 'http://127.0.0.1:9',
  BRIDGE_TARGET_RPC_URL: 'http://127.0.0.1:9',
  BRIDGE_SOURCE_CHAIN_ID: '1',
  BRIDGE_TARGET_CHAIN_ID: '2',
};

const fakes: KeyServiceFake[] = [];
const servers: ServerProcess[] = [];
const cleanups: (() => void)[] = [];

beforeAll(() => {
  ensureBuilt();
}, 120_000);

afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
  for (const fake of fakes.splice(0)) await fake.close();
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function startServer(env: Record<string, string>): ServerProcess {
  const server = new ServerProcess({ BRIDGE_POLL_INTERVAL_SECS: '3600', BRIDGE_RPC_TIMEOUT_MS: '5000', ...UNREACHABLE_RPC, ...env });
  servers.push(server);
  return server;
}

async function fakeOf(service: KeyServiceName): Promise<KeyServiceFake> {
  const fake = await startKeyServiceFake(service, Keypair.generate());
  fakes.push(fake);
  return fake;
}

describe('no start-up error prints a secret (server and ops CLI)', () => {
  const keyBytes = fixtureKeypairBytes();
  const pin = 'PINzq7&TAILsecret-DO-NOT-LEAK';
  const cases: [string, () => Promise<{ env: Record<string, string>; secrets: string[] }>][] = [
    [
      'the base58 secret key pasted',
      async () => ({ env: { BRIDGE_AUTHORITY_KEYPAIR: bs58.encode(Uint8Array.from(keyBytes)) }, secrets: [bs58.encode(Uint8Array.from(keyBytes))] }),
    ],
    ['the JSON array pasted', async () => ({ env: { BRIDGE_AUTHORITY_KEYPAIR: JSON.stringify(keyBytes) }, secrets: [JSON.stringify(keyBytes)] })],
    [
      'a PKCS#11 PIN with an unencoded &',
      async () => ({
        env: { BRIDGE_AUTHORITY_KEYPAIR: `pkcs11:token=t;object=k?module-path=/nonexistent/lib.so&pin-value=${pin}` },
        secrets: [pin, 'TAILsecret'],
      }),
    ],
    ...SERVICES.map((service): (typeof cases)[number] => [
      `${service} refusing the credentials' permission`,
      async () => {
        const fake = await fakeOf(service);
        fake.fault = 'denied';
        return { env: { ...fake.env, BRIDGE_AUTHORITY_KEYPAIR: fake.uri }, secrets: credentialsOf(fake) };
      },
    ]),
  ];

  it.each(cases)(
    '%s',
    async (_, setup) => {
      const { env, secrets } = await setup();
      const server = startServer(env);
      expect(await server.exited).toEqual({ code: 1, signal: null });
      const lines = withoutNodeVersionWarning(server.stderr())
        .split('\n')
        .filter((line) => line !== '');
      expect(lines).toHaveLength(1);
      expect(lines[0]!.startsWith('BRIDGE_AUTHORITY_KEYPAIR: ')).toBe(true);
      const cli = await ops(['signer'], env);
      expect(cli.code).toBe(1);
      expect(withoutNodeVersionWarning(cli.stderr).startsWith('ops: BRIDGE_AUTHORITY_KEYPAIR: ')).toBe(true);
      expect(leakedFragments([server.stdout(), server.stderr(), cli.stdout, cli.stderr].join('\n'), secrets)).toEqual([]);
    },
    60_000,
  );
});

describe('each key-service failure is one line with its fix, no stack trace (server)', () => {
  // Nothing may look for credentials beyond this host: no instance metadata service, no home directory's files.
  const ISOLATED = {
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_CONFIG_FILE: '/nonexistent/aws-config',
    AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials',
    METADATA_SERVER_DETECTION: 'none',
    GCE_METADATA_HOST: '127.0.0.1:9',
    GCE_METADATA_IP: '127.0.0.1:9',
  };
  const newlineToken = `${VAULT_TOKEN}\nX-Injected: 1`;
  const cases: [string, () => Promise<Record<string, string>>, RegExp][] = [
    [
      'gcp-kms without credentials',
      async () => {
        const fake = await fakeOf('gcp-kms');
        return { BRIDGE_AUTHORITY_KEYPAIR: fake.uri };
      },
      /^BRIDGE_AUTHORITY_KEYPAIR: Google Cloud KMS: no Application Default Credentials \(.*\); set GOOGLE_APPLICATION_CREDENTIALS to a service account key file/,
    ],
    [
      'aws-kms without a region',
      async () => {
        const { AWS_REGION: _, ...env } = (await fakeOf('aws-kms')).env;
        return { ...env, BRIDGE_AUTHORITY_KEYPAIR: `aws-kms:${AWS_KEY_ID}` };
      },
      /^BRIDGE_AUTHORITY_KEYPAIR: AWS KMS: GetPublicKey failed \(Error: Region is missing\); name the key's region in the URI \(aws-kms:<key>\?region=<region>, or the key's ARN\) or set AWS_REGION$/,
    ],
    [
      'a key Vault does not hold',
      async () => ({ ...(await fakeOf('vault-transit')).env, BRIDGE_AUTHORITY_KEYPAIR: 'vault-transit:transit/missing-key' }),
      /^BRIDGE_AUTHORITY_KEYPAIR: Vault transit: GET \/v1\/transit\/keys\/missing-key answered 404; .*create it with `vault write -f transit\/keys\/missing-key type=ed25519`/,
    ],
    [
      'a Vault token holding a line break',
      async () => {
        const fake = await fakeOf('vault-transit');
        return { ...fake.env, VAULT_TOKEN: newlineToken, BRIDGE_AUTHORITY_KEYPAIR: fake.uri };
      },
      /^BRIDGE_AUTHORITY_KEYPAIR: vault-transit URI: the Vault token in VAULT_TOKEN holds a line break, NUL, space or other character a token never has \(not printed\)/,
    ],
    [
      'SoftHSM without a readable SOFTHSM2_CONF',
      async () => {
        const hsm = createSoftHsm();
        cleanups.push(() => hsm.remove());
        return {
          SOFTHSM2_CONF: `${hsm.dir}/missing.conf`,
          BRIDGE_AUTHORITY_KEYPAIR: hsm.uri('token=bridge;object=authority', `pin-value=${TOKEN_PIN}`),
        };
      },
      /^BRIDGE_AUTHORITY_KEYPAIR: PKCS#11: module ".*libsofthsm2\.so" failed to initialize \(CKR_GENERAL_ERROR\); the module could not read its configuration: set SOFTHSM2_CONF to a softhsm2\.conf this user can read/,
    ],
    [
      'SoftHSM whose SOFTHSM2_CONF names a store without the token',
      async () => {
        const hsm = createSoftHsm();
        cleanups.push(() => hsm.remove());
        return { ...hsm.env, BRIDGE_AUTHORITY_KEYPAIR: hsm.uri('token=bridge;object=authority', `pin-value=${TOKEN_PIN}`) };
      },
      /^BRIDGE_AUTHORITY_KEYPAIR: PKCS#11: no initialized token matches token="bridge" \(tokens present: none\); SoftHSM reads its tokens from the directories\.tokendir of the softhsm2\.conf SOFTHSM2_CONF names/,
    ],
  ];

  it.each(cases)('%s', async (_, setup, line) => {
    const env = await setup();
    const server = startServer({ ...ISOLATED, ...env });
    expect(await server.exited).toEqual({ code: 1, signal: null });
    const lines = withoutNodeVersionWarning(server.stderr())
      .split('\n')
      .filter((text) => text !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(line);
    expect(server.stdout()).toBe('');
    expect(leakedFragments(server.stderr(), [VAULT_TOKEN, newlineToken, TOKEN_PIN])).toEqual([]);
  });
});

/**
 * AWS's client warns once, through process.emitWarning, that its releases after January 2027
 * need Node 22: Node's own warning, not the server's output, and left for the operator to see.
 */
function withoutNodeVersionWarning(stderr: string): string {
  return stderr.replace(/\(node:\d+\) Warning: NodeVersionSupportWarning[\s\S]*?--trace-warnings[^\n]*\n/, '');
}
