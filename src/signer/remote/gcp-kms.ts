import { createPublicKey } from 'node:crypto';
import type { SignerFailure } from '../../errors.js';
import { KEY_SERVICE_NAMES } from '../authority-signer.js';
import { ed25519RawFromSpki } from '../ed25519.js';
import { KEY_SERVICE_CALL_TIMEOUT_MS, type KeyService } from './remote-signer.js';
import { firstLine, signerFailure } from '../signer-failure.js';

/**
 * An Ed25519 key version in Google Cloud KMS (algorithm EC_SIGN_ED25519), through Google's own
 * client in its REST mode (HTTP/1.1 and JSON, no gRPC). `asymmetricSign` is given the message
 * itself (`data`), never a digest. Credentials come from Application Default Credentials
 * (GOOGLE_APPLICATION_CREDENTIALS, gcloud's, or the metadata server). The CRC32C fields are not
 * used: every signature is verified against the key by remote-signer.ts, which checks more.
 */

const NAME = KEY_SERVICE_NAMES['gcp-kms'];
// CryptoKeyVersionAlgorithm.EC_SIGN_ED25519 as a number: the client may decode an enum either way.
const EC_SIGN_ED25519 = 40;

export interface GcpKmsKey {
  /** projects/<p>/locations/<l>/keyRings/<r>/cryptoKeys/<k>/cryptoKeyVersions/<v> */
  name: string;
  /** Another endpoint than cloudkms.googleapis.com (Private Service Connect, a regional one). */
  endpoint?: URL;
}

export async function gcpKmsService(key: GcpKmsKey): Promise<KeyService> {
  // Loaded on demand: only a server whose key is in Google Cloud KMS loads Google's client.
  const { KeyManagementServiceClient } = await import('@google-cloud/kms');
  const endpoint = key.endpoint;
  const client = new KeyManagementServiceClient({
    fallback: true,
    ...(endpoint === undefined
      ? {}
      : { apiEndpoint: endpoint.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(endpoint.port || 443), protocol: endpoint.protocol.slice(0, -1) }),
  });
  // The crank's attempts are the one retry loop; each call is bounded by remote-signer.ts too.
  const options = { timeout: KEY_SERVICE_CALL_TIMEOUT_MS, maxRetries: 0 };
  return {
    description: { kind: 'gcp-kms', key: key.name },
    async publicKey() {
      await authenticated(client);
      const [answer] = await call('cloudkms.cryptoKeyVersions.viewPublicKey', () => client.getPublicKey({ name: key.name }, options));
      const algorithm = answer.algorithm;
      if (algorithm !== 'EC_SIGN_ED25519' && algorithm !== EC_SIGN_ED25519) {
        throw signerFailure(
          NAME,
          'not_ed25519',
          `key version ${key.name} has algorithm ${String(algorithm)}; Solana signs with Ed25519 (EC_SIGN_ED25519)`,
        );
      }
      return rawPublicKey(answer.pem ?? '', key.name);
    },
    async sign(message) {
      const [answer] = await call('cloudkms.cryptoKeyVersions.useToSign', () => client.asymmetricSign({ name: key.name, data: message }, options));
      if (answer.signature === undefined || answer.signature === null || typeof answer.signature === 'string') {
        throw signerFailure(NAME, 'service_unavailable', 'asymmetricSign answered without a signature');
      }
      return Uint8Array.from(answer.signature);
    },
  };
}

/**
 * Finds the credentials before the first call. Each of the client's methods starts the same
 * lookup without handling its failure (`initialize().catch(err => { throw err })`): without
 * credentials that is an unhandled rejection, which ends the process with a stack trace after
 * the startup line. Awaited here first, the failure is one line and no method is called.
 */
async function authenticated(client: { initialize(): Promise<unknown> }): Promise<void> {
  try {
    await client.initialize();
  } catch (err) {
    const advice =
      'set GOOGLE_APPLICATION_CREDENTIALS to a service account key file, run `gcloud auth application-default login`, or attach a service account to the machine';
    throw signerFailure(
      NAME,
      'permission_denied',
      `no Application Default Credentials (${firstLine(err).replace(/ Browse to \S+ for more information\.$/, '')}); ${advice}`,
      err,
    );
  }
}

function rawPublicKey(pem: string, name: string): Uint8Array {
  let raw: Uint8Array | undefined;
  try {
    raw = ed25519RawFromSpki(createPublicKey(pem).export({ format: 'der', type: 'spki' }));
  } catch {
    raw = undefined;
  }
  if (raw === undefined) throw signerFailure(NAME, 'not_ed25519', `key version ${name}'s public key is not an Ed25519 PEM`);
  return raw;
}

async function call<T>(permission: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    const { status, message } = googleError(err);
    const reason = FAILURES[status] ?? 'service_unavailable';
    const advice =
      reason === 'permission_denied'
        ? `; the Application Default Credentials need ${permission} on the key version`
        : reason === 'key_unusable'
          ? '; enable the key version in Cloud KMS'
          : '';
    throw signerFailure(NAME, reason, `${permission.split('.').at(-1)} failed (${status}: ${message})${advice}`, err);
  }
}

/**
 * The google.rpc status name of a failure: REST mode reports the HTTP status as `code` and the
 * service's error body ({error: {code, message, status}}) as the message; gRPC a numeric code.
 */
function googleError(err: unknown): { status: string; message: string } {
  const text = firstLine(err);
  try {
    const body = JSON.parse((err as Error).message) as { error?: { status?: unknown; message?: unknown } };
    if (typeof body.error?.status === 'string') return { status: body.error.status, message: String(body.error.message ?? '').slice(0, 200) };
  } catch {
    // Not the service's error body: a timeout, a refused connection, a gRPC error.
  }
  const code = (err as { code?: unknown }).code;
  return { status: typeof code === 'number' ? (RPC_CODES[code] ?? `HTTP ${code}`) : 'UNKNOWN', message: text };
}

// google.rpc.Code names of the numeric codes (gRPC) and of the HTTP statuses REST answers with.
const RPC_CODES: Record<number, string> = {
  3: 'INVALID_ARGUMENT',
  5: 'NOT_FOUND',
  7: 'PERMISSION_DENIED',
  9: 'FAILED_PRECONDITION',
  16: 'UNAUTHENTICATED',
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
};

// The failures that wait for an operator; the rest (UNAVAILABLE, DEADLINE_EXCEEDED,
// RESOURCE_EXHAUSTED, INTERNAL, ...) are asked again.
const FAILURES: Record<string, SignerFailure> = {
  INVALID_ARGUMENT: 'key_unusable', // the version cannot sign (wrong purpose)
  NOT_FOUND: 'key_not_found',
  PERMISSION_DENIED: 'permission_denied',
  FAILED_PRECONDITION: 'key_unusable', // disabled or destroyed
  UNAUTHENTICATED: 'permission_denied',
};
