import { readFileSync, statSync, type Stats } from 'node:fs';
import { Keypair } from '@solana/web3.js';
import type { AuthoritySigner } from './authority-signer.js';
import { ed25519PublicKeyOfSeed } from './ed25519.js';
import { FileKeySigner } from './file-key-signer.js';
import { isBridgeError, type BridgeError } from '../errors.js';
import { untrustedPathProblem } from './file-trust.js';
import { keyServiceKind } from './remote/key-service-uri.js';
import { isPkcs11Uri, parsePkcs11Uri, pkcs11UriProblem } from './pkcs11/pkcs11-uri.js';
import { fileErrorCode, readSecretFile } from './secret-file.js';
import { AUTHORITY_VARIABLE, configProblem, type ConfigProblem } from './signer-failure.js';

/**
 * Loads the authority signer named by BRIDGE_AUTHORITY_KEYPAIR: a Solana CLI keypair file (a
 * JSON array of 64 integers 0..255, the 32-byte secret seed followed by the 32-byte public key)
 * a PKCS#11 URI (pkcs11-uri.ts) of a key inside a token, or a key service's URI
 * (key-service-uri.ts). Files another account could change are refused (file-trust.ts). Every problem names
 * BRIDGE_AUTHORITY_KEYPAIR, never any byte of the file or the PIN: parser messages (which quote
 * the input) and causes are dropped on purpose.
 */

const KEYPAIR_LENGTH = 64;
// A well-formed file is under 300 bytes; refuse to read anything much larger into memory.
const MAX_FILE_BYTES = 64 * 1024;

export interface LoadedKeypair {
  keypair: Keypair;
  warnings: string[];
}

export interface LoadedSigner {
  signer: AuthoritySigner;
  warnings: string[];
}

/**
 * Opens the signer before the server listens; throws CONFIG__INVALID with one problem line. `env`
 * holds the key services' own variables (VAULT_ADDR, VAULT_TOKEN, ...); AWS's and Google's
 * clients read theirs from the process's environment.
 */
export async function loadAuthoritySigner(source: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadedSigner> {
  refuseKeyItself(source);
  const service = keyServiceKind(source);
  if (service !== undefined) {
    const { openKeyServiceSigner } = await import('./remote/key-service.js');
    return { signer: await opened(openKeyServiceSigner(source, service, env)), warnings: [] };
  }
  if (!isPkcs11Uri(source)) {
    const { keypair, warnings } = loadAuthorityKeypair(source);
    return { signer: new FileKeySigner(keypair), warnings };
  }
  const { modulePath, selection, pin } = parsePkcs11Uri(source);
  refuseUntrusted(modulePath, 'module-path', pkcs11UriProblem);
  const pinValue = pin.kind === 'value' ? pin.value : readSecretFile(pin.path, 'pin-source', pkcs11UriProblem);
  // Loaded on demand: the native binding is needed only with a token.
  const { openPkcs11Signer } = await import('./pkcs11/pkcs11-signer.js');
  return { signer: await opened(openPkcs11Signer({ modulePath, ...selection, pin: pinValue })), warnings: [] };
}

/** A signer that cannot be opened is one CONFIG__INVALID line naming the variable. */
async function opened(signer: Promise<AuthoritySigner>): Promise<AuthoritySigner> {
  try {
    return await signer;
  } catch (err) {
    if (!isBridgeError(err, 'SIGNER__UNAVAILABLE')) throw err;
    // The signer's message starts with its name ("PKCS#11: ", the key service's) and never holds a secret.
    throw configProblem(err.message);
  }
}

/**
 * The key pasted instead of a path (a base58 secret, the keypair's JSON array, hex or base64):
 * refused without a character of it. A path with no slash and no dot that long is unusual;
 * the message says how to name such a file.
 */
function refuseKeyItself(source: string): void {
  if (!looksLikeKey(source.trim())) return;
  throw configProblem(
    `the value looks like a key itself (${source.length} characters, not printed), not a path or a URI; write the key to a file readable only by this user (umask 077) and name the file (./name for a file in the working directory), or name a pkcs11:, aws-kms:, gcp-kms: or vault-transit: URI`,
  );
}

/** JSON, PEM, several lines, base58/hex/base64url without a slash or dot, or padded base64 with digits. */
function looksLikeKey(text: string): boolean {
  if (text.startsWith('[') || text.startsWith('{') || text.startsWith('-----BEGIN') || text.includes('\n')) return true;
  if (/^[A-Za-z0-9+=_-]{32,}$/.test(text)) return true;
  return text.length % 4 === 0 && /^[A-Za-z0-9+/]{40,}={0,2}$/.test(text) && /\d/.test(text) && !text.startsWith('/');
}

/** A module or secret another account could replace (file-trust.ts), or one that is not there. */
function refuseUntrusted(path: string, what: string, problem: ConfigProblem): void {
  let untrusted: string | undefined;
  try {
    untrusted = untrustedPathProblem(path);
  } catch {
    // A missing module is the module loader's to report, with the loader's own reason.
    return;
  }
  if (untrusted !== undefined) throw problem(`${what} ${JSON.stringify(path)} ${untrusted}`);
}

/** Throws CONFIG__INVALID with one problem line. */
export function loadAuthorityKeypair(path: string): LoadedKeypair {
  const stats = statKeypairFile(path);
  const untrusted = untrustedPathProblem(path);
  if (untrusted !== undefined) throw keypairProblem(path, untrusted);
  const bytes = parseKeypairBytes(readKeypairText(path), path);
  return { keypair: toKeypair(bytes, path), warnings: permissionWarnings(stats, path) };
}

function keypairProblem(path: string, problem: string): BridgeError<'CONFIG__INVALID'> {
  return configProblem(`keypair file ${JSON.stringify(path)} ${problem}`);
}

function statKeypairFile(path: string): Stats {
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch (err) {
    throw keypairProblem(path, `cannot be read (${fileErrorCode(err)}); mount the authority keypair there or fix the path`);
  }
  if (!stats.isFile()) throw keypairProblem(path, 'is not a regular file');
  if (stats.size > MAX_FILE_BYTES) {
    throw keypairProblem(path, `is ${stats.size} bytes; a Solana CLI keypair file is a JSON array of 64 integers (under 1 KiB)`);
  }
  return stats;
}

function readKeypairText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw keypairProblem(path, `cannot be read (${fileErrorCode(err)}); check the file's permissions`);
  }
}

/** Checks every element before converting: Uint8Array.from would wrap 256 to 0 silently. */
function parseKeypairBytes(text: string, path: string): Uint8Array {
  const expected = `expected a JSON array of ${KEYPAIR_LENGTH} integers 0..255 (Solana CLI keypair format)`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw keypairProblem(path, `is not valid JSON; ${expected}`);
  }
  if (!Array.isArray(value)) throw keypairProblem(path, `holds a JSON ${jsonKind(value)}; ${expected}`);
  if (value.length !== KEYPAIR_LENGTH) throw keypairProblem(path, `holds an array of ${value.length} elements; ${expected}`);
  const invalid = value.findIndex((element) => !Number.isInteger(element) || element < 0 || element > 255);
  if (invalid !== -1) throw keypairProblem(path, `has element ${invalid} that is not an integer 0..255; ${expected}`);
  return Uint8Array.from(value as number[]);
}

function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  return typeof value;
}

/**
 * The public key checked against the seed with Node's native Ed25519: web3.js's own check
 * (`Keypair.fromSecretKey` without skipValidation) builds its JavaScript curve tables, some 50 ms
 * of the start and 1.5 MiB kept for nothing, since the file signer signs natively.
 */
function toKeypair(bytes: Uint8Array, path: string): Keypair {
  const derived = ed25519PublicKeyOfSeed(bytes.subarray(0, 32));
  if (!Buffer.from(bytes.subarray(32)).equals(derived)) {
    throw keypairProblem(
      path,
      'has a public key (elements 32..63) that does not match its secret key (elements 0..31); the file is corrupt or not a Solana CLI keypair',
    );
  }
  return Keypair.fromSecretKey(bytes, { skipValidation: true });
}

function fileMode(stats: Stats): string {
  return (stats.mode & 0o777).toString(8).padStart(4, '0');
}

function permissionWarnings(stats: Stats, path: string): string[] {
  if ((stats.mode & 0o044) === 0) return [];
  return [
    `${AUTHORITY_VARIABLE}: keypair file ${JSON.stringify(path)} is readable by group or others (mode ${fileMode(stats)}); restrict it with chmod 600`,
  ];
}
