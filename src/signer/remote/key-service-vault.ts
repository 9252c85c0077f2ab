import { X509Certificate } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { KEY_SERVICE_NAMES } from '../authority-signer.js';
import { signerFailure, type ConfigProblem } from '../signer-failure.js';
import type { VaultToken, VaultTransitKey } from './vault-transit.js';
import { BridgeError, isBridgeError } from '../../errors.js';
import { untrustedPathProblem } from '../file-trust.js';
import { isLoopbackHost, keyServiceProblem, type KeyServiceUri } from './key-service-uri.js';
import { fileErrorCode, readSecretFile } from '../secret-file.js';

/**
 * Vault's own variables, as its CLI reads them: VAULT_ADDR (https, or http to a loopback
 * address only: the token would cross the network in clear), VAULT_TOKEN or the URI's
 * token-source file, VAULT_NAMESPACE, and VAULT_CACERT (a PEM file) or VAULT_CAPATH (a directory
 * of PEM files; VAULT_CACERT wins when both are set) as the only trust anchors for its
 * certificate. The CA files must be ones no other account can change (file-trust.ts), as the
 * token file must. A token is printable ASCII: one holding a line break, a NUL or any other
 * character a Vault token never has is refused unprinted.
 */

type VaultUri = Extract<KeyServiceUri, { kind: 'vault-transit' }>;

// A CA directory like /etc/ssl/certs (about 150 roots, each as a file, a hashed link and in the
// bundle: about 1 MiB) fits; a mis-mounted large file or directory is refused.
const MAX_CA_BYTES = 4 * 1024 * 1024;
const MAX_CA_FILES = 1000;
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
const VAULT_TOKEN_CHARACTERS = /^[\x21-\x7e]+$/;

export function vaultAccess(uri: VaultUri, env: NodeJS.ProcessEnv): Omit<VaultTransitKey, 'mount' | 'key'> {
  const problem = (text: string) => keyServiceProblem('vault-transit', text);
  const address = vaultAddress(env['VAULT_ADDR'], problem);
  const token = uri.tokenFile === undefined ? variableToken(env['VAULT_TOKEN'], problem) : fileToken(uri.tokenFile, problem);
  const ca = trustAnchors(env, problem);
  const namespace = env['VAULT_NAMESPACE'];
  return { address, token, ...(ca === undefined ? {} : { ca }), ...(namespace === undefined || namespace === '' ? {} : { namespace }) };
}

function vaultAddress(address: string | undefined, problem: ConfigProblem): string {
  if (address === undefined || address === '') throw problem('VAULT_ADDR is not set; set it to the Vault server (https://vault.example:8200)');
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw problem('VAULT_ADDR is not a URL');
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search !== '' || url.username !== '' || url.password !== '') {
    throw problem('VAULT_ADDR must be https://<host>[:<port>] with no query or user');
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw problem(`VAULT_ADDR ${url.origin} would send the token in clear; use https:// (http only to a loopback address)`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function variableToken(token: string | undefined, problem: ConfigProblem): VaultToken {
  if (token === undefined || token === '')
    throw problem('no Vault token: set VAULT_TOKEN or add ?token-source=file:<a mounted file holding the token>');
  const checked = checkedToken(token, 'VAULT_TOKEN', problem);
  return { current: () => checked };
}

/** The file's token, read again when the file changed (its inode, size or times) or when asked to. */
function fileToken(path: string, problem: ConfigProblem): VaultToken {
  const read = (fail: ConfigProblem) => checkedToken(readSecretFile(path, 'token-source', fail), `token-source file ${JSON.stringify(path)}`, fail);
  // Stamped before it is read: a change in between is read again at the next call, never missed.
  let seen = stamp(path);
  let token = read(problem);
  return {
    current(reread = false) {
      const now = stamp(path);
      if (!reread && now === seen) return token;
      try {
        token = read((text) => new BridgeError('CONFIG__INVALID', { problems: [text] }));
      } catch (err) {
        if (!isBridgeError(err, 'CONFIG__INVALID')) throw err;
        throw signerFailure(
          KEY_SERVICE_NAMES['vault-transit'],
          'permission_denied',
          `the token could not be read again: ${err.context.problems.join('; ')}`,
        );
      }
      seen = now;
      return token;
    },
  };
}

function stamp(path: string): string {
  try {
    const stats = statSync(path);
    return `${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
  } catch (err) {
    return fileErrorCode(err);
  }
}

function checkedToken(token: string, origin: string, problem: ConfigProblem): string {
  if (VAULT_TOKEN_CHARACTERS.test(token)) return token;
  throw problem(
    `the Vault token in ${origin} holds a line break, NUL, space or other character a token never has (not printed); write the token alone on one line`,
  );
}

/** VAULT_CACERT's certificates, or those of every file in VAULT_CAPATH; undefined for Node's own roots. */
function trustAnchors(env: NodeJS.ProcessEnv, problem: ConfigProblem): string[] | undefined {
  const file = env['VAULT_CACERT'];
  const dir = env['VAULT_CAPATH'];
  if (file !== undefined && file !== '') return certificates([file], () => `VAULT_CACERT file ${JSON.stringify(file)}`, problem);
  if (dir === undefined || dir === '') return undefined;
  const named = `VAULT_CAPATH directory ${JSON.stringify(dir)}`;
  let entries: string[];
  try {
    entries = readdirSync(dir).sort();
  } catch (err) {
    throw problem(`${named} cannot be read (${fileErrorCode(err)})`);
  }
  if (entries.length > MAX_CA_FILES) throw problem(`${named} holds over ${MAX_CA_FILES} entries`);
  const files = entries.map((entry) => join(dir, entry)).filter((path) => statSync(path, { throwIfNoEntry: false })?.isFile() === true);
  if (files.length === 0) throw problem(`${named} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return certificates(files, (path) => `VAULT_CAPATH file ${JSON.stringify(path)}`, problem);
}

/** Every PEM certificate of the files, each checked to parse; `named` says which file a problem is in. */
function certificates(files: string[], named: (path: string) => string, problem: ConfigProblem): string[] {
  // A hashed link (c_rehash) and its target hold the same certificate: kept once.
  const found = new Set<string>();
  let bytes = 0;
  for (const path of files) {
    const text = readTrusted(path, named(path), problem);
    bytes += text.length;
    if (bytes > MAX_CA_BYTES) throw problem(`${named(path)}: the certificates are over ${MAX_CA_BYTES} bytes in all`);
    for (const [pem] of text.matchAll(PEM_CERTIFICATE)) {
      if (!parses(pem)) throw problem(`${named(path)} holds a PEM certificate that does not parse`);
      found.add(pem);
    }
  }
  if (found.size === 0) throw problem(`${named(files[0]!)} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return [...found];
}

function parses(pem: string): boolean {
  try {
    return new X509Certificate(pem).raw.length > 0;
  } catch {
    return false;
  }
}

function readTrusted(path: string, named: string, problem: ConfigProblem): string {
  let untrusted: string | undefined;
  try {
    if (statSync(path).size > MAX_CA_BYTES) throw problem(`${named} is over ${MAX_CA_BYTES} bytes`);
    untrusted = untrustedPathProblem(path);
  } catch (err) {
    if (isBridgeError(err, 'CONFIG__INVALID')) throw err;
    throw problem(`${named} cannot be read (${fileErrorCode(err)}); mount the CA certificate there or fix the path`);
  }
  if (untrusted !== undefined) throw problem(`${named} ${untrusted}`);
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw problem(`${named} cannot be read (${fileErrorCode(err)}); check its permissions`);
  }
}
