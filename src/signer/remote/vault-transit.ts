import type { SignerFailure } from '../../errors.js';
import { KEY_SERVICE_NAMES } from '../authority-signer.js';
import type { KeyService } from './remote-signer.js';
import { signerFailure } from '../signer-failure.js';
import { exchange } from './vault-http.js';
import { TokenLease, type VaultCall } from './vault-token-lease.js';

/**
 * An `ed25519` key in a HashiCorp Vault transit engine, through Vault's HTTP API
 * (`GET /v1/<mount>/keys/<key>`, `POST /v1/<mount>/sign/<key>`). Every signature names the key
 * version read at start: a key rotated in Vault must not silently become another authority.
 *
 * The token is asked of its source before every call (a token-source file is re-read when it
 * changed: Vault Agent or a secret volume rotates it) and once more after a 403, which is tried
 * again when the source then holds another token. A renewable token is renewed
 * (vault-token-lease.ts). Transport: vault-http.ts (the operator's CA, no redirect to another
 * origin, bounded answers).
 */

const NAME = KEY_SERVICE_NAMES['vault-transit'];

/** Where the token comes from: VAULT_TOKEN, or a token-source file re-read when it changes. */
export interface VaultToken {
  /** The token to send; `reread` reads the file even when it looks unchanged. Throws SIGNER__UNAVAILABLE when it cannot. */
  current(reread?: boolean): string;
}

export interface VaultTransitKey {
  /** VAULT_ADDR's origin and path prefix, without a trailing slash. */
  address: string;
  token: VaultToken;
  namespace?: string;
  /** PEM certificates of VAULT_CACERT / VAULT_CAPATH, which replace Node's trust anchors. */
  ca?: readonly string[];
  mount: string;
  key: string;
}

interface VaultKey {
  type?: unknown;
  latest_version?: unknown;
  keys?: Record<string, { public_key?: unknown } | undefined>;
}

export function vaultTransitService(key: VaultTransitKey): KeyService {
  const named = `${key.mount}/${key.key}`;
  const path = (action: 'keys' | 'sign') => `/v1/${key.mount.split('/').map(encodeURIComponent).join('/')}/${action}/${encodeURIComponent(key.key)}`;
  const call = vaultCall(key);
  const lease = new TokenLease(call, key.token);
  let version: number | undefined;
  return {
    description: { kind: 'vault-transit', key: named },
    async publicKey(signal) {
      const data = dataOf(await call('GET', path('keys'), undefined, signal, { capability: 'read', missing: missingKey(key) }), 'keys') as VaultKey;
      if (data.type !== 'ed25519')
        throw signerFailure(NAME, 'not_ed25519', `key ${named} has type ${JSON.stringify(data.type)}; Solana signs with ed25519`);
      if (typeof data.latest_version !== 'number') throw signerFailure(NAME, 'service_unavailable', `key ${named}'s answer has no latest_version`);
      version = data.latest_version;
      const encoded = data.keys?.[String(version)]?.public_key;
      if (typeof encoded !== 'string') throw signerFailure(NAME, 'not_ed25519', `version ${version} of key ${named} has no public_key`);
      lease.watch();
      return Uint8Array.from(Buffer.from(encoded, 'base64'));
    },
    async sign(message, signal) {
      const body = { input: Buffer.from(message).toString('base64'), ...(version === undefined ? {} : { key_version: version }) };
      const data = dataOf(await call('POST', path('sign'), body, signal, { capability: 'update', missing: missingKey(key) }), 'sign');
      lease.watch();
      const signature = data['signature'];
      const match = typeof signature === 'string' ? /^vault:v\d+:([A-Za-z0-9+/=]+)$/.exec(signature) : null;
      if (match === null) throw signerFailure(NAME, 'service_unavailable', 'sign answered without a vault:v<n>:<base64> signature');
      return Uint8Array.from(Buffer.from(match[1]!, 'base64'));
    },
    observe: (observer) => lease.observe(observer),
  };
}

function dataOf(answer: Record<string, unknown>, what: string): Record<string, unknown> {
  const data = answer['data'];
  if (typeof data !== 'object' || data === null) throw signerFailure(NAME, 'service_unavailable', `${what} answered without data`);
  return data as Record<string, unknown>;
}

function missingKey(key: VaultTransitKey): string {
  return `no key ${key.key} under mount ${key.mount} (or no transit engine mounted there): create it with \`vault write -f ${key.mount}/keys/${key.key} type=ed25519\`, or fix the URI`;
}

/** One call with the current token, and once more after a 403 when the token's source then holds another token. */
function vaultCall(key: VaultTransitKey): VaultCall {
  return async (method, path, body, signal, meaning) => {
    const url = new URL(`${key.address}${path}`);
    const send = (token: string) => {
      const headers: Record<string, string> = { 'X-Vault-Token': token, 'Content-Type': 'application/json' };
      if (key.namespace !== undefined) headers['X-Vault-Namespace'] = key.namespace;
      return exchange(url, {
        method,
        headers,
        signal,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(key.ca === undefined ? {} : { ca: key.ca }),
      });
    };
    const sent = key.token.current();
    let answer = await send(sent);
    if (answer.status === 403) {
      const reread = key.token.current(true);
      if (reread !== sent) answer = await send(reread);
    }
    return parsed(`${method} ${url.pathname}`, answer, meaning);
  };
}

/** Vault's answer as JSON; a failure names its `errors` (never the token) and what to do. */
function parsed(
  what: string,
  answer: { status: number; text: string },
  meaning: { capability: 'read' | 'update'; missing?: string },
): Record<string, unknown> {
  let body: { errors?: unknown } & Record<string, unknown> = {};
  try {
    body = JSON.parse(answer.text) as typeof body;
  } catch {
    // Reported below by status, or as an answer without data.
  }
  if (answer.status >= 200 && answer.status < 300) return body;
  const reason = failureOf(answer.status);
  const errors = Array.isArray(body.errors)
    ? body.errors
        .filter((e) => typeof e === 'string')
        .join('; ')
        .replace(/\s+/g, ' ')
        .trim()
        .slice(0, 200)
    : '';
  const path = what.slice(what.indexOf('/v1/') + 4);
  const advice =
    reason === 'permission_denied'
      ? `; the token's policy needs "${meaning.capability}" on ${path} (or the token expired: renew it or write a new one where it is read)`
      : reason === 'key_not_found' && meaning.missing !== undefined
        ? `; ${meaning.missing}`
        : '';
  throw signerFailure(NAME, reason, `${what} answered ${answer.status}${errors === '' ? '' : ` (${errors})`}${advice}`);
}

function failureOf(status: number): SignerFailure {
  if (status === 401 || status === 403) return 'permission_denied';
  if (status === 404) return 'key_not_found';
  if (status === 400) return 'key_unusable';
  return 'service_unavailable';
}
