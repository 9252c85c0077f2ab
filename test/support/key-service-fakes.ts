import { execFileSync } from 'node:child_process';
import { createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Keypair } from '@solana/web3.js';
import { ed25519PrivateKeyObject } from '../../src/signer/ed25519.js';

/**
 * Local stand-ins for AWS KMS, Google Cloud KMS and Vault transit: a loopback HTTP server each,
 * speaking the service's documented wire protocol (AWS's JSON 1.1 `TrentService.*` targets,
 * Cloud KMS's REST `:asymmetricSign` and `/publicKey`, Vault's `/v1/<mount>/sign|keys/<key>`),
 * refusing a request without the service's authentication header, answering errors with the
 * service's error bodies, and signing with a real Ed25519 key. `fault` switches one failure on:
 * `redirect` answers 307 to `redirectTo` (once per request: the redirected request is served),
 * `garbled` a 500 whose message holds control characters. The Vault fake also answers
 * `auth/token/lookup-self` and `renew-self` for its `vault.token`, with `vault.ttlSecs` (0: a
 * root token, not renewable), and 404 `{"errors":[]}` for a key it does not hold, as Vault does.
 * With `tls` it listens on https. `npm run rehearse:key-services` (scripts/key-service-fakes.ts)
 * starts the three for an operator's rehearsal.
 */

export type Fault = 'none' | 'denied' | 'hang' | 'unavailable' | 'wrong_key' | 'not_ed25519' | 'disabled' | 'redirect' | 'garbled';
export type KeyServiceName = 'aws-kms' | 'gcp-kms' | 'vault-transit';

export const AWS_KEY_ID = '1234abcd-12ab-34cd-56ef-1234567890ab';
export const GCP_KEY_NAME = 'projects/bridge/locations/global/keyRings/operators/cryptoKeys/authority/cryptoKeyVersions/1';
export const VAULT_TOKEN = 'hvs.vault-token-3f9a-DO-NOT-LEAK';
const AWS_SECRET = 'aws-secret-8d2e-DO-NOT-LEAK';
// Bounds the fake's own reading of a request: the clients send a few KiB at most.
const MAX_REQUEST_BYTES = 64 * 1024;
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export interface KeyServiceFake {
  url: string;
  fault: Fault;
  /** Requests seen, by operation (Sign, GetPublicKey, asymmetricSign, ...). */
  requests: { operation: string; authorization: string }[];
  /** The variables and URI a server needs to use this fake with its service's standard chain. */
  env: Record<string, string>;
  uri: string;
  /** Where `redirect` sends a request: an origin (another one, or this fake's own). */
  redirectTo: string;
  vault: { token: string; ttlSecs: number };
  close(): Promise<void>;
}

export interface FakeOptions {
  /** PEM key and certificate to listen on https with (loopbackCertificate()). */
  tls?: { key: string; cert: string };
  /** A fixed port (the rehearsal's); 0 picks a free one. */
  port?: number;
}

type Reply = { status: number; body: unknown };
type Handler = (operation: string, body: Record<string, unknown>, fake: KeyServiceFake) => Reply | undefined;

export async function startKeyServiceFake(service: KeyServiceName, keypair: Keypair, options: FakeOptions = {}): Promise<KeyServiceFake> {
  const key = ed25519PrivateKeyObject(keypair.secretKey.subarray(0, 32));
  const other = generateKeyPairSync('ed25519').privateKey;
  const signWith = (fake: KeyServiceFake, data: Buffer) => sign(null, data, fake.fault === 'wrong_key' ? other : key);
  const publicDer = createPublicKey(key).export({ format: 'der', type: 'spki' });
  const handlers: Record<
    KeyServiceName,
    { route: (req: IncomingMessage) => string | undefined; authorized: (req: IncomingMessage) => string | undefined; handle: Handler }
  > = {
    'aws-kms': awsKms(publicDer, signWith),
    'gcp-kms': gcpKms(publicDer, signWith),
    'vault-transit': vaultTransit(publicDer, signWith),
  };
  const { route, authorized, handle } = handlers[service];
  const hung = new Set<ServerResponse>();
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    void answer(req, res);
  };
  const server = options.tls === undefined ? createServer(listener) : createHttpsServer(options.tls, listener);
  const credentials = service === 'gcp-kms' ? googleCredentials() : undefined;
  const fake: KeyServiceFake = {
    url: '',
    fault: 'none',
    requests: [],
    env: {},
    uri: '',
    redirectTo: '',
    vault: { token: VAULT_TOKEN, ttlSecs: 0 },
    async close() {
      for (const res of hung) res.destroy();
      credentials?.remove();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const operation = route(req) ?? 'unknown';
    const authorization = authorized(req);
    fake.requests.push({ operation, authorization: authorization ?? '' });
    if (fake.fault === 'hang') {
      hung.add(res);
      return;
    }
    const url = new URL(req.url ?? '/', 'http://fake');
    if (fake.fault === 'redirect' && !url.searchParams.has('redirected')) {
      url.searchParams.set('redirected', '1');
      res.writeHead(307, { location: `${fake.redirectTo}${url.pathname}${url.search}` });
      res.end();
      return;
    }
    if (fake.fault === 'garbled') {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify(garbled(service)));
      return;
    }
    const reply: Reply =
      authorization === undefined
        ? unauthenticated(service)
        : (handle(operation, body, fake) ?? { status: 404, body: { message: `unknown operation ${operation}` } });
    res.writeHead(reply.status, { 'content-type': service === 'aws-kms' ? 'application/x-amz-json-1.1' : 'application/json' });
    res.end(JSON.stringify(reply.body));
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  fake.url = `${options.tls === undefined ? 'http' : 'https'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  if (service === 'aws-kms') {
    fake.env = {
      AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
      AWS_SECRET_ACCESS_KEY: AWS_SECRET,
      AWS_REGION: 'eu-west-1',
      AWS_ENDPOINT_URL_KMS: fake.url,
    };
    fake.uri = `aws-kms:${AWS_KEY_ID}`;
  } else if (service === 'gcp-kms') {
    fake.env = { GOOGLE_APPLICATION_CREDENTIALS: credentials!.path };
    fake.uri = `gcp-kms:${GCP_KEY_NAME}?endpoint=${encodeURIComponent(fake.url)}`;
  } else {
    fake.env = { VAULT_ADDR: fake.url, VAULT_TOKEN };
    fake.uri = 'vault-transit:transit/bridge-authority';
  }
  return fake;
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > MAX_REQUEST_BYTES) break;
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
  } catch {
    return {};
  }
}

// An escape sequence, a NUL, a line break and a right-to-left override, as a hostile proxy might answer.
const GARBLED_TEXT = 'sealed\u001b[2J\u0000\nforged line \u202eabc';

function garbled(service: KeyServiceName): unknown {
  if (service === 'aws-kms') return { __type: 'KMSInternalException', message: GARBLED_TEXT };
  if (service === 'gcp-kms') return { error: { code: 500, message: GARBLED_TEXT, status: 'INTERNAL' } };
  return { errors: [GARBLED_TEXT] };
}

function unauthenticated(service: KeyServiceName): Reply {
  if (service === 'aws-kms') return { status: 400, body: { __type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' } };
  if (service === 'gcp-kms')
    return {
      status: 401,
      body: { error: { code: 401, message: 'Request is missing required authentication credential.', status: 'UNAUTHENTICATED' } },
    };
  return { status: 403, body: { errors: ['permission denied'] } };
}

type SignWith = (fake: KeyServiceFake, data: Buffer) => Buffer;

/** AWS KMS: POST / with X-Amz-Target TrentService.<Operation>, SigV4 signed; errors as {__type, message}. */
function awsKms(publicDer: Buffer, signWith: SignWith) {
  const arn = `arn:aws:kms:eu-west-1:111122223333:key/${AWS_KEY_ID}`;
  return {
    route: (req: IncomingMessage) => /^TrentService\.(\w+)$/.exec(String(req.headers['x-amz-target']))?.[1],
    authorized: (req: IncomingMessage) => {
      const header = String(req.headers['authorization'] ?? '');
      return header.startsWith('AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/') && header.includes('Signature=') ? header : undefined;
    },
    handle(operation: string, body: Record<string, unknown>, fake: KeyServiceFake): Reply | undefined {
      const error = (type: string, message: string) => ({ status: 400, body: { __type: type, message } });
      if (body['KeyId'] !== AWS_KEY_ID) return error('NotFoundException', `Key '${arn.replace(AWS_KEY_ID, String(body['KeyId']))}' does not exist`);
      if (fake.fault === 'denied')
        return error(
          'AccessDeniedException',
          `User: arn:aws:iam::111122223333:user/bridge is not authorized to perform: kms:${operation} on resource: ${arn} because no identity-based policy allows the kms:${operation} action`,
        );
      if (fake.fault === 'unavailable')
        return { status: 500, body: { __type: 'KMSInternalException', message: 'The request was rejected because an internal exception occurred.' } };
      if (fake.fault === 'disabled') return error('DisabledException', `${arn} is disabled.`);
      if (operation === 'GetPublicKey') {
        const spec = fake.fault === 'not_ed25519' ? 'ECC_NIST_P256' : 'ECC_NIST_EDWARDS25519';
        return {
          status: 200,
          body: {
            KeyId: arn,
            KeySpec: spec,
            KeyUsage: 'SIGN_VERIFY',
            PublicKey: publicDer.toString('base64'),
            SigningAlgorithms: ['ED25519_SHA_512', 'ED25519_PH_SHA_512'],
          },
        };
      }
      if (operation !== 'Sign') return undefined;
      if (body['MessageType'] !== 'RAW' || body['SigningAlgorithm'] !== 'ED25519_SHA_512')
        return error('ValidationException', 'this key signs RAW messages with ED25519_SHA_512 in this fake');
      const signature = signWith(fake, Buffer.from(String(body['Message']), 'base64'));
      return { status: 200, body: { KeyId: arn, Signature: signature.toString('base64'), SigningAlgorithm: 'ED25519_SHA_512' } };
    },
  };
}

/** Cloud KMS REST: GET /v1/<version>/publicKey, POST /v1/<version>:asymmetricSign, Bearer token; errors as {error: {code, message, status}}. */
function gcpKms(publicDer: Buffer, signWith: SignWith) {
  let intEnums = false;
  return {
    route: (req: IncomingMessage) => {
      const url = new URL(req.url ?? '/', 'http://fake');
      intEnums = (url.searchParams.get('$alt') ?? '').includes('enum-encoding=int');
      if (req.method === 'GET' && url.pathname === `/v1/${GCP_KEY_NAME}/publicKey`) return 'getPublicKey';
      if (req.method === 'POST' && url.pathname === `/v1/${GCP_KEY_NAME}:asymmetricSign`) return 'asymmetricSign';
      return undefined;
    },
    authorized: (req: IncomingMessage) => {
      const header = String(req.headers['authorization'] ?? '');
      return /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/.test(header) ? header : undefined;
    },
    handle(operation: string, body: Record<string, unknown>, fake: KeyServiceFake): Reply | undefined {
      const error = (code: number, status: string, message: string) => ({ status: code, body: { error: { code, message, status } } });
      if (fake.fault === 'denied') {
        const permission = operation === 'asymmetricSign' ? 'useToSign' : 'viewPublicKey';
        return error(
          403,
          'PERMISSION_DENIED',
          `Permission 'cloudkms.cryptoKeyVersions.${permission}' denied on resource '${GCP_KEY_NAME}' (or it may not exist).`,
        );
      }
      if (fake.fault === 'unavailable') return error(503, 'UNAVAILABLE', 'The service is currently unavailable.');
      if (fake.fault === 'disabled') return error(400, 'FAILED_PRECONDITION', `${GCP_KEY_NAME} is not enabled, current state is: DISABLED.`);
      if (operation === 'getPublicKey') {
        const ed25519 = fake.fault !== 'not_ed25519';
        const pem = ed25519
          ? createPublicKey({ key: publicDer, format: 'der', type: 'spki' }).export({ format: 'pem', type: 'spki' })
          : otherCurvePem();
        const algorithm = ed25519 ? (intEnums ? 40 : 'EC_SIGN_ED25519') : intEnums ? 12 : 'EC_SIGN_P256_SHA256';
        return { status: 200, body: { pem, algorithm, name: GCP_KEY_NAME, protectionLevel: intEnums ? 2 : 'HSM' } };
      }
      if (operation !== 'asymmetricSign') return undefined;
      if (typeof body['data'] !== 'string' || body['digest'] !== undefined)
        return error(400, 'INVALID_ARGUMENT', 'EC_SIGN_ED25519 keys sign data, not a digest');
      const signature = signWith(fake, Buffer.from(body['data'], 'base64'));
      return {
        status: 200,
        body: { signature: signature.toString('base64'), verifiedDataCrc32c: false, name: GCP_KEY_NAME, protectionLevel: intEnums ? 2 : 'HSM' },
      };
    },
  };
}

/** Vault transit: /v1/<mount>/keys/<key>, /v1/<mount>/sign/<key>, X-Vault-Token; errors as {errors: [...]}. */
function vaultTransit(publicDer: Buffer, signWith: SignWith) {
  let token = '';
  return {
    route: (req: IncomingMessage) => {
      const path = new URL(req.url ?? '/', 'http://fake').pathname;
      token = String(req.headers['x-vault-token'] ?? '');
      if (path === '/v1/auth/token/lookup-self' || path === '/v1/auth/token/renew-self') return path.slice('/v1/auth/token/'.length);
      const key = /^\/v1\/transit\/(keys|sign)\/([^/]+)$/.exec(path);
      if (key === null || (req.method === 'GET') !== (key[1] === 'keys')) return undefined;
      return key[2] === 'bridge-authority' ? key[1] : 'missing';
    },
    authorized: () => (token !== '' ? token : undefined),
    handle(operation: string, body: Record<string, unknown>, fake: KeyServiceFake): Reply | undefined {
      if (token !== fake.vault.token || fake.fault === 'denied')
        return { status: 403, body: { errors: ['1 error occurred:\n\t* permission denied\n\n'] } };
      if (operation === 'lookup-self')
        return { status: 200, body: { data: { renewable: fake.vault.ttlSecs > 0, ttl: fake.vault.ttlSecs, policies: ['default', 'bridge'] } } };
      if (operation === 'renew-self')
        return { status: 200, body: { auth: { client_token: token, renewable: true, lease_duration: fake.vault.ttlSecs } } };
      if (operation === 'missing') return { status: 404, body: { errors: [] } };
      if (fake.fault === 'unavailable') return { status: 503, body: { errors: ['Vault is sealed'] } };
      if (fake.fault === 'disabled') return { status: 400, body: { errors: ['key not found or signing not supported by this key'] } };
      if (operation === 'keys') {
        const type = fake.fault === 'not_ed25519' ? 'ecdsa-p256' : 'ed25519';
        const publicKey = publicDer.subarray(ED25519_SPKI_PREFIX.length).toString('base64');
        return {
          status: 200,
          body: {
            data: {
              name: 'bridge-authority',
              type,
              latest_version: 1,
              supports_signing: true,
              keys: { '1': { name: 'ed25519', public_key: publicKey, creation_time: '2026-11-27T06:00:00Z' } },
            },
          },
        };
      }
      if (operation !== 'sign') return undefined;
      if (body['key_version'] !== undefined && body['key_version'] !== 1)
        return { status: 400, body: { errors: ['requested version for signing is not available'] } };
      const signature = signWith(fake, Buffer.from(String(body['input']), 'base64'));
      return { status: 200, body: { data: { signature: `vault:v1:${signature.toString('base64')}`, key_version: 1 } } };
    },
  };
}

function otherCurvePem(): string {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'pem', type: 'spki' }).toString();
}

/** A service account key file, as GOOGLE_APPLICATION_CREDENTIALS names one; its token_uri is never reached (Cloud KMS takes a self-signed JWT). */
function googleCredentials(): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-gcp-'));
  const path = join(dir, 'service-account.json');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = (privateKey as KeyObject).export({ format: 'pem', type: 'pkcs8' }).toString();
  const file = {
    type: 'service_account',
    project_id: 'bridge',
    private_key_id: 'fake-key-id',
    private_key: pem,
    client_email: 'bridge-operator@bridge.iam.gserviceaccount.com',
    client_id: '1',
    token_uri: 'http://127.0.0.1:9/token',
  };
  writeFileSync(path, JSON.stringify(file), { mode: 0o600 });
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A self-signed certificate for 127.0.0.1 (valid a day), made with openssl as an operator makes
 * one: the fake's TLS identity and, as VAULT_CACERT, the only anchor that vouches for it.
 */
export function loopbackCertificate(): { key: string; cert: string; certPath: string; dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-tls-'));
  const keyPath = join(dir, 'vault-key.pem');
  const certPath = join(dir, 'vault-ca.pem');
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1'];
  execFileSync('openssl', [...args, '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyPath, '-out', certPath], {
    stdio: 'ignore',
    timeout: 30_000,
  });
  return {
    key: readFileSync(keyPath, 'utf8'),
    cert: readFileSync(certPath, 'utf8'),
    certPath,
    dir,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** What authenticates to a fake: the AWS secret key, the service account file's private key, the Vault token. */
export function credentialsOf(fake: KeyServiceFake): string[] {
  if (fake.env['AWS_SECRET_ACCESS_KEY'] !== undefined) return [AWS_SECRET];
  if (fake.env['VAULT_TOKEN'] !== undefined) return [VAULT_TOKEN];
  const file = JSON.parse(readFileSync(fake.env['GOOGLE_APPLICATION_CREDENTIALS']!, 'utf8')) as { private_key: string };
  return [file.private_key.replace(/-----[A-Z ]+-----/g, '')];
}
