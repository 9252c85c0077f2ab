import { readBoundedBody } from '../rpc/bounded-body.js';
import type { SignerFailure } from '../../errors.js';
import { KEY_SERVICE_NAMES } from '../authority-signer.js';
import type { KeyService } from './remote-signer.js';
import { signerFailure } from './signer-failure.js';

/**
 * An `ed25519` key in a HashiCorp Vault transit engine, through Vault's HTTP API
 * (`GET /v1/<mount>/keys/<key>`, `POST /v1/<mount>/sign/<key>`). Every signature names the key
 * version read at start: a key rotated in Vault must not silently become another authority.
 * Answers are read up to MAX_VAULT_ANSWER_BYTES.
 */

const NAME = KEY_SERVICE_NAMES['vault-transit'];
// A key's description with a few hundred versions, or one signature: far under this.
const MAX_VAULT_ANSWER_BYTES = 256 * 1024;

export interface VaultTransitKey {
  /** VAULT_ADDR's origin and path prefix, without a trailing slash. */
  address: string;
  token: string;
  namespace?: string;
  mount: string;
  key: string;
}

interface VaultKey {
  type?: unknown;
  latest_version?: unknown;
  keys?: Record<string, { public_key?: unknown } | undefined>;
}

export function vaultTransitService(key: VaultTransitKey): KeyService {
  const path = (action: 'keys' | 'sign') => `${key.address}/v1/${key.mount.split('/').map(encodeURIComponent).join('/')}/${action}/${encodeURIComponent(key.key)}`;
  const headers: Record<string, string> = { 'X-Vault-Token': key.token, 'Content-Type': 'application/json' };
  if (key.namespace !== undefined) headers['X-Vault-Namespace'] = key.namespace;
  let version: number | undefined;
  return {
    description: { kind: 'vault-transit', key: `${key.mount}/${key.key}` },
    async publicKey(signal) {
      const data = (await request(path('keys'), { headers, signal }, 'read')) as VaultKey;
      if (data.type !== 'ed25519') throw signerFailure(NAME, 'not_ed25519', `key ${key.mount}/${key.key} has type ${JSON.stringify(data.type)}; Solana signs with ed25519`);
      if (typeof data.latest_version !== 'number') throw signerFailure(NAME, 'service_unavailable', `key ${key.mount}/${key.key}'s answer has no latest_version`);
      version = data.latest_version;
      const encoded = data.keys?.[String(version)]?.public_key;
      if (typeof encoded !== 'string') throw signerFailure(NAME, 'not_ed25519', `version ${version} of key ${key.mount}/${key.key} has no public_key`);
      return Uint8Array.from(Buffer.from(encoded, 'base64'));
    },
    async sign(message, signal) {
      const body = JSON.stringify({ input: Buffer.from(message).toString('base64'), ...(version === undefined ? {} : { key_version: version }) });
      const data = (await request(path('sign'), { method: 'POST', headers, body, signal }, 'update')) as { signature?: unknown };
      const match = typeof data.signature === 'string' ? /^vault:v\d+:([A-Za-z0-9+/=]+)$/.exec(data.signature) : null;
      if (match === null) throw signerFailure(NAME, 'service_unavailable', 'sign answered without a vault:v<n>:<base64> signature');
      return Uint8Array.from(Buffer.from(match[1]!, 'base64'));
    },
  };
}

/** The `data` of a Vault answer; its `errors` (never the token) in the failure otherwise. */
async function request(url: string, init: RequestInit, capability: 'read' | 'update'): Promise<Record<string, unknown>> {
  const response = await fetch(url, init);
  const body = await readBoundedBody(response, MAX_VAULT_ANSWER_BYTES);
  if (body.kind === 'too_large') throw signerFailure(NAME, 'service_unavailable', `the answer is over ${MAX_VAULT_ANSWER_BYTES} bytes`);
  let parsed: { data?: unknown; errors?: unknown } = {};
  try {
    parsed = JSON.parse(body.text) as typeof parsed;
  } catch {
    // Reported below by status, or as an answer without data.
  }
  const what = `${init.method ?? 'GET'} ${new URL(url).pathname}`;
  if (!response.ok) {
    const reason = failureOf(response.status);
    const errors = Array.isArray(parsed.errors) ? parsed.errors.filter((e) => typeof e === 'string').join('; ').replace(/\s+/g, ' ').trim().slice(0, 200) : '';
    const advice = reason === 'permission_denied' ? `; the token's policy needs "${capability}" on ${new URL(url).pathname.slice(4)}` : '';
    throw signerFailure(NAME, reason, `${what} answered ${response.status}${errors === '' ? '' : ` (${errors})`}${advice}`);
  }
  if (typeof parsed.data !== 'object' || parsed.data === null) throw signerFailure(NAME, 'service_unavailable', `${what} answered without data`);
  return parsed.data as Record<string, unknown>;
}

function failureOf(status: number): SignerFailure {
  if (status === 401 || status === 403) return 'permission_denied';
  if (status === 404) return 'key_not_found';
  if (status === 400) return 'key_unusable';
  return 'service_unavailable';
}
