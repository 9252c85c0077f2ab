import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { KEY_SERVICE_NAMES } from '../authority-signer.js';
import { isBridgeError } from '../../errors.js';
import { firstLine, signerFailure } from '../signer-failure.js';

/**
 * One HTTP exchange with Vault, through node:http(s) rather than fetch: the trust anchors are
 * the operator's (VAULT_CACERT / VAULT_CAPATH) when given, and no redirect is followed
 * implicitly. A 307/308 to the same origin (scheme, host, port) is followed at most
 * MAX_REDIRECTS times; one to another origin (a standby node naming the active one, a hostile
 * proxy) is refused without a request, so the token never leaves for an address VAULT_ADDR did
 * not name. The answer is read up to MAX_VAULT_ANSWER_BYTES; the caller's signal bounds the time.
 */

const NAME = KEY_SERVICE_NAMES['vault-transit'];
// A key's description with a few hundred versions, or one signature: far under this.
const MAX_VAULT_ANSWER_BYTES = 256 * 1024;
const MAX_REDIRECTS = 2;
// Node's names for a server certificate its trust anchors do not vouch for.
const UNTRUSTED_CERTIFICATE = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
]);

export interface VaultExchange {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  /** PEM certificates that replace Node's trust anchors for https (VAULT_CACERT / VAULT_CAPATH). */
  ca?: readonly string[];
}

export interface VaultAnswer {
  status: number;
  text: string;
}

/** Throws SIGNER__UNAVAILABLE (service_unavailable) when no answer comes back. */
export async function exchange(url: URL, init: VaultExchange): Promise<VaultAnswer> {
  let target = url;
  for (let hop = 0; ; hop += 1) {
    const response = await send(target, init);
    const location = response.headers.location;
    if (![307, 308].includes(response.statusCode ?? 0) || location === undefined)
      return { status: response.statusCode ?? 0, text: await readAnswer(response) };
    response.resume();
    const next = URL.canParse(location, target.href) ? new URL(location, target) : undefined;
    if (next === undefined || next.origin !== url.origin) {
      const where = next === undefined ? 'an unreadable Location' : `${next.origin}`;
      throw signerFailure(
        NAME,
        'service_unavailable',
        `${init.method} ${url.pathname} was redirected to ${where}, another origin than VAULT_ADDR's ${url.origin}; the token is never sent there: set VAULT_ADDR to the active node or a load balancer in front of the cluster`,
      );
    }
    if (hop === MAX_REDIRECTS)
      throw signerFailure(NAME, 'service_unavailable', `${init.method} ${url.pathname} was redirected more than ${MAX_REDIRECTS} times`);
    target = next;
  }
}

function send(url: URL, init: VaultExchange): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const options = { method: init.method, headers: init.headers, signal: init.signal };
    const done = (response: IncomingMessage) => resolve(response);
    const req =
      url.protocol === 'https:'
        ? httpsRequest(url, { ...options, ...(init.ca === undefined ? {} : { ca: [...init.ca] }) }, done)
        : httpRequest(url, options, done);
    req.on('error', (err) => reject(transportFailure(url, err)));
    req.end(init.body);
  });
}

function readAnswer(response: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    response.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_VAULT_ANSWER_BYTES) {
        response.destroy();
        reject(signerFailure(NAME, 'service_unavailable', `the answer is over ${MAX_VAULT_ANSWER_BYTES} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.on('error', (err) =>
      reject(
        isBridgeError(err, 'SIGNER__UNAVAILABLE')
          ? err
          : signerFailure(NAME, 'service_unavailable', `reading the answer failed (${firstLine(err)})`, err),
      ),
    );
  });
}

function transportFailure(url: URL, err: Error): Error {
  if (err.name === 'AbortError') return err;
  const code = (err as NodeJS.ErrnoException).code ?? '';
  const advice = UNTRUSTED_CERTIFICATE.has(code) ? UNTRUSTED_ADVICE : CERTIFICATE_ADVICE[code];
  if (advice !== undefined)
    return signerFailure(NAME, 'service_unavailable', `${url.origin} presented a certificate this server refuses (${code}); ${advice}`, err);
  return signerFailure(NAME, 'service_unavailable', `${url.origin} cannot be reached (${code === '' ? firstLine(err) : code})`, err);
}

const UNTRUSTED_ADVICE = 'set VAULT_CACERT to the PEM file of the CA that signed it (or VAULT_CAPATH to a directory of such files)';
const CERTIFICATE_ADVICE: Record<string, string> = {
  CERT_HAS_EXPIRED: "renew Vault's certificate",
  CERT_NOT_YET_VALID: "check this host's clock, or Vault's certificate's validity",
  ERR_TLS_CERT_ALTNAME_INVALID: 'name Vault in VAULT_ADDR as its certificate does',
};
