import { readFileSync, statSync, type Stats } from 'node:fs';
import { Keypair } from '@solana/web3.js';
import type { AuthoritySigner } from '../chain/authority-signer.js';
import { FileKeySigner } from '../chain/client/file-key-signer.js';
import { BridgeError, isBridgeError } from '../errors.js';
import { isPkcs11Uri, parsePkcs11Uri, pkcs11UriProblem, type Pkcs11Pin } from './pkcs11-uri.js';

/**
 * Loads the authority signer named by BRIDGE_AUTHORITY_KEYPAIR: a Solana CLI keypair file (a
 * JSON array of 64 integers 0..255, the 32-byte secret seed followed by the 32-byte public key)
 * or a PKCS#11 URI (pkcs11-uri.ts) of a key inside a token. Every problem names
 * BRIDGE_AUTHORITY_KEYPAIR, never any byte of the file or the PIN: parser messages (which quote
 * the input) and causes are dropped on purpose.
 */

const VARIABLE = 'BRIDGE_AUTHORITY_KEYPAIR';
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

// A PIN is a few dozen bytes; refuse to read a mis-mounted large file into memory.
const MAX_PIN_FILE_BYTES = 1024;

/** Opens the signer before the server listens; throws CONFIG__INVALID with one problem line. */
export async function loadAuthoritySigner(source: string): Promise<LoadedSigner> {
  if (!isPkcs11Uri(source)) {
    const { keypair, warnings } = loadAuthorityKeypair(source);
    return { signer: new FileKeySigner(keypair), warnings };
  }
  const { modulePath, selection, pin } = parsePkcs11Uri(source);
  // Loaded on demand: the native binding is needed only with a token.
  const { openPkcs11Signer } = await import('../chain/client/pkcs11-signer.js');
  try {
    return { signer: await openPkcs11Signer({ modulePath, ...selection, pin: readPin(pin) }), warnings: [] };
  } catch (err) {
    if (!isBridgeError(err, 'SIGNER__UNAVAILABLE')) throw err;
    // The signer's message starts with "PKCS#11: " and never holds the PIN.
    const line = `${VARIABLE}: ${err.message}`;
    throw new BridgeError('CONFIG__INVALID', { problems: [line] }, line);
  }
}

function readPin(pin: Pkcs11Pin): string {
  if (pin.kind === 'value') return pin.value;
  let stats: Stats;
  try {
    stats = statSync(pin.path);
  } catch (err) {
    throw pkcs11UriProblem(`pin-source file ${JSON.stringify(pin.path)} cannot be read (${fileErrorCode(err)}); mount the PIN secret there`);
  }
  if (!stats.isFile() || stats.size > MAX_PIN_FILE_BYTES) {
    throw pkcs11UriProblem(`pin-source ${JSON.stringify(pin.path)} is not a file of at most ${MAX_PIN_FILE_BYTES} bytes holding the PIN`);
  }
  let text: string;
  try {
    text = readFileSync(pin.path, 'utf8');
  } catch (err) {
    throw pkcs11UriProblem(`pin-source file ${JSON.stringify(pin.path)} cannot be read (${fileErrorCode(err)}); check its permissions`);
  }
  // Secret files usually end with a newline that is not part of the PIN.
  const value = text.replace(/\r?\n$/, '');
  if (value === '') throw pkcs11UriProblem(`pin-source file ${JSON.stringify(pin.path)} is empty`);
  return value;
}

/** Throws CONFIG__INVALID with one problem line. */
export function loadAuthorityKeypair(path: string): LoadedKeypair {
  const stats = statKeypairFile(path);
  refuseWorldWritable(stats, path);
  const bytes = parseKeypairBytes(readKeypairText(path), path);
  return { keypair: toKeypair(bytes, path), warnings: permissionWarnings(stats, path) };
}

function keypairProblem(path: string, problem: string): BridgeError<'CONFIG__INVALID'> {
  const line = `${VARIABLE}: keypair file ${JSON.stringify(path)} ${problem}`;
  return new BridgeError('CONFIG__INVALID', { problems: [line] }, line);
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

function fileErrorCode(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : 'unknown error';
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

function toKeypair(bytes: Uint8Array, path: string): Keypair {
  try {
    return Keypair.fromSecretKey(bytes);
  } catch {
    throw keypairProblem(
      path,
      'has a public key (elements 32..63) that does not match its secret key (elements 0..31); the file is corrupt or not a Solana CLI keypair',
    );
  }
}

/** Anyone on the host could swap the key this server signs with (or plant one an attacker holds). */
function refuseWorldWritable(stats: Stats, path: string): void {
  if ((stats.mode & 0o002) === 0) return;
  throw keypairProblem(path, `is writable by others (mode ${fileMode(stats)}); restrict it with chmod 600`);
}

function fileMode(stats: Stats): string {
  return (stats.mode & 0o777).toString(8).padStart(4, '0');
}

function permissionWarnings(stats: Stats, path: string): string[] {
  if ((stats.mode & 0o044) === 0) return [];
  return [`${VARIABLE}: keypair file ${JSON.stringify(path)} is readable by group or others (mode ${fileMode(stats)}); restrict it with chmod 600`];
}
