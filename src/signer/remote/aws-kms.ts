import type { SignerFailure } from '../../errors.js';
import { KEY_SERVICE_NAMES } from '../authority-signer.js';
import { ed25519RawFromSpki } from '../ed25519.js';
import { KEY_SERVICE_CALL_TIMEOUT_MS, type KeyService } from './remote-signer.js';
import { firstLine, signerFailure } from '../signer-failure.js';

/**
 * An Ed25519 key in AWS KMS (key spec ECC_NIST_EDWARDS25519), through AWS's own client. KMS
 * signs the message itself with `MessageType: RAW` and `ED25519_SHA_512` (PureEdDSA, what Solana
 * verifies); the pre-hashed variant would give another signature. Credentials and, unless the
 * key's ARN or the URI names it, the region come from AWS's default provider chain; its endpoint
 * from AWS_ENDPOINT_URL_KMS when set.
 */

const NAME = KEY_SERVICE_NAMES['aws-kms'];

export interface AwsKmsKey {
  /** A key id, a key ARN, `alias/<name>` or an alias ARN. */
  keyId: string;
  region?: string;
}

export async function awsKmsService(key: AwsKmsKey): Promise<KeyService> {
  // Loaded on demand: only a server whose key is in AWS KMS loads AWS's client.
  const { KMSClient, GetPublicKeyCommand, SignCommand } = await import('@aws-sdk/client-kms');
  const client = new KMSClient({
    ...(key.region === undefined ? {} : { region: key.region }),
    // The crank's attempts are the one retry loop; each call is bounded by remote-signer.ts too.
    maxAttempts: 1,
    requestHandler: { connectionTimeout: KEY_SERVICE_CALL_TIMEOUT_MS, requestTimeout: KEY_SERVICE_CALL_TIMEOUT_MS },
  });
  const KeyId = key.keyId;
  return {
    description: { kind: 'aws-kms', key: key.keyId },
    async publicKey(signal) {
      const answer = await call('kms:GetPublicKey', () => client.send(new GetPublicKeyCommand({ KeyId }), { abortSignal: signal }));
      if (answer.KeySpec !== 'ECC_NIST_EDWARDS25519') {
        throw signerFailure(
          NAME,
          'not_ed25519',
          `key ${key.keyId} has key spec ${answer.KeySpec ?? 'unknown'}; Solana signs with Ed25519 (ECC_NIST_EDWARDS25519)`,
        );
      }
      if (answer.KeyUsage !== 'SIGN_VERIFY')
        throw signerFailure(NAME, 'key_unusable', `key ${key.keyId} has key usage ${answer.KeyUsage ?? 'unknown'}, not SIGN_VERIFY`);
      const raw = answer.PublicKey === undefined ? undefined : ed25519RawFromSpki(answer.PublicKey);
      if (raw === undefined) throw signerFailure(NAME, 'not_ed25519', `key ${key.keyId}'s public key is not an Ed25519 SubjectPublicKeyInfo`);
      return raw;
    },
    async sign(message, signal) {
      const command = new SignCommand({ KeyId, Message: message, MessageType: 'RAW', SigningAlgorithm: 'ED25519_SHA_512' });
      const answer = await call('kms:Sign', () => client.send(command, { abortSignal: signal }));
      if (answer.Signature === undefined) throw signerFailure(NAME, 'service_unavailable', 'Sign answered without a signature');
      return answer.Signature;
    },
  };
}

async function call<T>(permission: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    const name = (err as { name?: unknown }).name;
    const { reason, advice } = classify(typeof name === 'string' ? name : '', firstLine(err), permission);
    throw signerFailure(
      NAME,
      reason,
      `${permission.slice(4)} failed (${typeof name === 'string' ? `${name}: ` : ''}${firstLine(err)})${advice}`,
      err,
    );
  }
}

// KMS's error types (the `__type` of its JSON 1.1 error bodies), by what an operator does next.
const FINAL: Record<string, SignerFailure> = {
  AccessDeniedException: 'permission_denied',
  UnrecognizedClientException: 'permission_denied',
  InvalidSignatureException: 'permission_denied',
  IncompleteSignature: 'permission_denied',
  MissingAuthenticationToken: 'permission_denied',
  NotFoundException: 'key_not_found',
  InvalidArnException: 'key_not_found',
  DisabledException: 'key_unusable',
  KMSInvalidStateException: 'key_unusable',
  InvalidKeyUsageException: 'key_unusable',
  UnsupportedOperationException: 'key_unusable',
};

// What the client fails with before it sends anything: the settings it could not find.
const REGION_MISSING = 'Region is missing';
const REGION_ADVICE = "; name the key's region in the URI (aws-kms:<key>?region=<region>, or the key's ARN) or set AWS_REGION";
const CREDENTIALS_ADVICE =
  "; give the server credentials through AWS's default chain (an instance or task role, AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)";

function classify(name: string, message: string, permission: string): { reason: SignerFailure; advice: string } {
  if (message === REGION_MISSING) return { reason: 'key_not_found', advice: REGION_ADVICE };
  if (name === 'CredentialsProviderError') return { reason: 'permission_denied', advice: CREDENTIALS_ADVICE };
  const reason = FINAL[name] ?? 'service_unavailable';
  if (reason === 'permission_denied') return { reason, advice: `; the credentials from AWS's default chain need ${permission} on the key` };
  if (reason === 'key_unusable') return { reason, advice: '; enable the key (or cancel its deletion) in KMS' };
  return { reason, advice: '' };
}
