import { readFileSync, statSync, type Stats } from 'node:fs';
import type { BridgeError } from '../errors.js';
import { untrustedPathProblem } from './file-trust.js';

/**
 * A short secret mounted as a file (a PKCS#11 PIN, a Vault token): at most MAX_SECRET_FILE_BYTES,
 * which no other account can change (file-trust.ts), without its trailing newline. Problems name
 * the file, never its content.
 */

// A PIN or a token is a few dozen bytes; refuse to read a mis-mounted large file into memory.
const MAX_SECRET_FILE_BYTES = 1024;

export function readSecretFile(path: string, what: string, problem: (text: string) => BridgeError<'CONFIG__INVALID'>): string {
  const named = `${what} file ${JSON.stringify(path)}`;
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch (err) {
    throw problem(`${named} cannot be read (${fileErrorCode(err)}); mount the secret there`);
  }
  if (!stats.isFile() || stats.size > MAX_SECRET_FILE_BYTES) throw problem(`${named} is not a file of at most ${MAX_SECRET_FILE_BYTES} bytes`);
  const untrusted = untrustedPathProblem(path);
  if (untrusted !== undefined) throw problem(`${named} ${untrusted}`);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw problem(`${named} cannot be read (${fileErrorCode(err)}); check its permissions`);
  }
  // Secret files usually end with a newline that is not part of the secret.
  const value = text.replace(/\r?\n$/, '');
  if (value === '') throw problem(`${named} is empty`);
  return value;
}

export function fileErrorCode(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : 'unknown error';
}
