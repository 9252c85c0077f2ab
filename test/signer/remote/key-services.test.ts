import { Keypair } from '@solana/web3.js';
import { randomBytes, verify } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ed25519PublicKeyObject } from '../../../src/signer/ed25519.js';
import { verifiedSignature } from '../../../src/signer/verified-signature.js';
import { loadAuthoritySigner } from '../../../src/signer/open-signer.js';
import { isBridgeError } from '../../../src/errors.js';
import { awsKmsService } from '../../../src/signer/remote/aws-kms.js';
import { gcpKmsService } from '../../../src/signer/remote/gcp-kms.js';
import { openRemoteSigner, type KeyService } from '../../../src/signer/remote/remote-signer.js';
import { vaultTransitService } from '../../../src/signer/remote/vault-transit.js';
import {
  AWS_KEY_ID,
  GCP_KEY_NAME,
  startKeyServiceFake,
  VAULT_TOKEN,
  type Fault,
  type KeyServiceFake,
  type KeyServiceName,
} from '../../support/key-service-fakes.js';
import { keypairDir } from '../../support/keypair-files.js';

/**
 * Each key service's signer against its local fake (test/support/key-service-fakes.ts): the
 * signer the server opens from BRIDGE_AUTHORITY_KEYPAIR, the platform's client underneath.
 */

const SERVICES: KeyServiceName[] = ['aws-kms', 'gcp-kms', 'vault-transit'];
let fake: KeyServiceFake | undefined;
const saved = { ...process.env };

afterEach(async () => {
  await fake?.close();
  fake = undefined;
  process.env = { ...saved };
});

async function started(service: KeyServiceName, keypair = Keypair.generate()): Promise<KeyServiceFake> {
  fake = await startKeyServiceFake(service, keypair);
  // The platforms' clients read their standard chains from the process's environment.
  Object.assign(process.env, fake.env);
  return fake;
}

async function startProblem(f: KeyServiceFake): Promise<string> {
  try {
    await loadAuthoritySigner(f.uri, process.env);
  } catch (err) {
    if (isBridgeError(err, 'CONFIG__INVALID')) return err.context.problems.join('\n');
    throw err;
  }
  throw new Error('expected the signer to be refused');
}

describe.each(SERVICES)('%s', (service) => {
  it('reports the key as the authority and signs messages that verify with it, authenticated as the service requires', async () => {
    const keypair = Keypair.generate();
    const f = await started(service, keypair);
    const { signer, warnings } = await loadAuthoritySigner(f.uri, process.env);
    expect(warnings).toEqual([]);
    expect(signer.publicKey.toBase58()).toBe(keypair.publicKey.toBase58());
    expect(signer.describe()).toMatchObject({ kind: service });
    const message = randomBytes(300);
    const signature = await signer.sign(message);
    expect(verify(null, message, ed25519PublicKeyObject(keypair.publicKey), signature)).toBe(true);
    expect(f.requests.length).toBeGreaterThanOrEqual(3);
    expect(f.requests.every((request) => request.authorization !== '')).toBe(true);
  });

  it.each<[Fault, RegExp]>([
    ['denied', /permission|denied|AccessDenied/i],
    ['not_ed25519', /Ed25519|ed25519/],
    ['wrong_key', /does not verify with the authority's public key/],
    ['disabled', /disabled|not supported|DISABLED/i],
  ])('refuses to start on %s with one line naming the variable', async (fault, problem) => {
    const f = await started(service);
    f.fault = fault;
    const line = await startProblem(f);
    expect(line.split('\n')).toHaveLength(1);
    expect(line.startsWith('BRIDGE_AUTHORITY_KEYPAIR: ')).toBe(true);
    expect(line).toMatch(problem);
  });

  it('a refused permission at signing is final and names the permission; a failing service is retryable; a wrong signature is never used', async () => {
    const f = await started(service);
    const { signer } = await loadAuthoritySigner(f.uri, process.env);
    f.fault = 'denied';
    const denied = await signer.sign(randomBytes(32)).catch((err: unknown) => err);
    expect(isBridgeError(denied, 'SIGNER__UNAVAILABLE') && denied.context.reason).toBe('permission_denied');
    expect((denied as Error).message).toMatch(
      service === 'aws-kms'
        ? /kms:Sign/
        : service === 'gcp-kms'
          ? /cloudkms\.cryptoKeyVersions\.useToSign/
          : /"update" on transit\/sign\/bridge-authority/,
    );
    f.fault = 'unavailable';
    const unavailable = await signer.sign(randomBytes(32)).catch((err: unknown) => err);
    expect(isBridgeError(unavailable, 'SIGNER__UNAVAILABLE') && unavailable.context.reason).toBe('service_unavailable');
    f.fault = 'wrong_key';
    const wrong = await verifiedSignature(signer, randomBytes(32)).catch((err: unknown) => err);
    expect(isBridgeError(wrong, 'SIGNER__UNAVAILABLE') && wrong.context.reason).toBe('key_mismatch');
    f.fault = 'none';
    expect(await signer.sign(randomBytes(32))).toHaveLength(64);
  });
});

describe('each failure to reach a key service is one line saying what to set', () => {
  // Nothing here may look for credentials beyond this host: no instance metadata service, no home directory's files.
  function isolated(): string {
    const files = keypairDir();
    after.push(() => files.remove());
    Object.assign(process.env, {
      HOME: files.dir,
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_CONFIG_FILE: `${files.dir}/none`,
      AWS_SHARED_CREDENTIALS_FILE: `${files.dir}/none`,
    });
    Object.assign(process.env, { METADATA_SERVER_DETECTION: 'none', GCE_METADATA_HOST: '127.0.0.1:9', GCE_METADATA_IP: '127.0.0.1:9' });
    return files.dir;
  }
  const after: (() => void)[] = [];
  afterEach(() => {
    for (const cleanup of after.splice(0)) cleanup();
  });

  it('aws-kms without a region names ?region= and AWS_REGION', async () => {
    const f = await started('aws-kms');
    isolated();
    delete process.env['AWS_REGION'];
    delete process.env['AWS_DEFAULT_REGION'];
    expect(await startProblem(f)).toBe(
      "BRIDGE_AUTHORITY_KEYPAIR: AWS KMS: GetPublicKey failed (Error: Region is missing); name the key's region in the URI (aws-kms:<key>?region=<region>, or the key's ARN) or set AWS_REGION",
    );
    expect(f.requests).toEqual([]);
  });

  it('aws-kms without credentials names the default chain', async () => {
    const f = await started('aws-kms');
    isolated();
    delete process.env['AWS_ACCESS_KEY_ID'];
    delete process.env['AWS_SECRET_ACCESS_KEY'];
    expect(await startProblem(f)).toMatch(
      /^BRIDGE_AUTHORITY_KEYPAIR: AWS KMS: GetPublicKey failed \(CredentialsProviderError: [^)]*\); give the server credentials through AWS's default chain/,
    );
  });

  it('gcp-kms without credentials: one line naming GOOGLE_APPLICATION_CREDENTIALS, and no rejection left unhandled', async () => {
    const f = await started('gcp-kms');
    isolated();
    delete process.env['GOOGLE_APPLICATION_CREDENTIALS'];
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      expect(await startProblem(f)).toBe(
        'BRIDGE_AUTHORITY_KEYPAIR: Google Cloud KMS: no Application Default Credentials (Could not load the default credentials.); set GOOGLE_APPLICATION_CREDENTIALS to a service account key file, run `gcloud auth application-default login`, or attach a service account to the machine',
      );
      // Rejections are reported after the microtasks of the turn that made them.
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      process.off('unhandledRejection', record);
    }
    expect(unhandled).toEqual([]);
    expect(f.requests).toEqual([]);
  });

  it.each(SERVICES)('%s: control characters in what the service answers are escaped, never printed', async (service) => {
    const f = await started(service);
    f.fault = 'garbled';
    const line = await startProblem(f);
    expect(line.split('\n')).toHaveLength(1);
    expect(line).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(line).toContain('\\u001b[2J');
  });
});

describe('a key service that stops answering', () => {
  const BOUND_MS = 300;
  const services: Record<KeyServiceName, (f: KeyServiceFake) => Promise<KeyService>> = {
    'aws-kms': async () => awsKmsService({ keyId: AWS_KEY_ID }),
    'gcp-kms': async (f) => gcpKmsService({ name: GCP_KEY_NAME, endpoint: new URL(f.url) }),
    'vault-transit': async (f) =>
      vaultTransitService({ address: f.url, token: { current: () => VAULT_TOKEN }, mount: 'transit', key: 'bridge-authority' }),
  };

  it.each(SERVICES)('%s: a hung call becomes the retryable service_unavailable within the bound', async (service) => {
    const f = await started(service);
    const signer = await openRemoteSigner(await services[service](f), BOUND_MS);
    f.fault = 'hang';
    const began = performance.now();
    const failure = await signer.sign(randomBytes(32)).catch((err: unknown) => err);
    const tookMs = performance.now() - began;
    expect(isBridgeError(failure, 'SIGNER__UNAVAILABLE') && failure.context.reason).toBe('service_unavailable');
    expect((failure as Error).message).toContain(`signing took longer than ${BOUND_MS} ms`);
    expect(tookMs).toBeGreaterThanOrEqual(BOUND_MS - 5);
    expect(tookMs).toBeLessThan(BOUND_MS + 1_000);
  });
});

describe('Vault transit: the token from a token-source file', () => {
  it('signs with the token the file holds (VAULT_TOKEN unset), and refuses a file others can change', async () => {
    const f = await started('vault-transit');
    delete process.env['VAULT_TOKEN'];
    const files = keypairDir();
    try {
      const token = files.write('vault-token', `${VAULT_TOKEN}\n`, 0o600);
      const { signer } = await loadAuthoritySigner(`${f.uri}?token-source=file:${token}`, process.env);
      expect(await signer.sign(randomBytes(32))).toHaveLength(64);
      const shared = files.write('shared-token', `${VAULT_TOKEN}\n`, 0o666);
      const refused = await loadAuthoritySigner(`${f.uri}?token-source=file:${shared}`, process.env).catch((err: unknown) => err);
      expect(isBridgeError(refused, 'CONFIG__INVALID') && refused.message).toBe(
        `BRIDGE_AUTHORITY_KEYPAIR: vault-transit URI: token-source file ${JSON.stringify(shared)} is writable by its group and others (mode 0666); restrict it with chmod 600`,
      );
      const none = await loadAuthoritySigner(f.uri, process.env).catch((err: unknown) => err);
      expect((none as Error).message).toContain('no Vault token: set VAULT_TOKEN or add ?token-source=file:');
    } finally {
      files.remove();
    }
  });
});
