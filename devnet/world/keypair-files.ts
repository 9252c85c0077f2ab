import { open, readFile } from 'node:fs/promises';
import { Keypair } from '@solana/web3.js';
import { DevnetError } from '../devnet-error.js';

/**
 * Keypair files in the Solana CLI format (a JSON array of the 64 secret-key bytes), created with
 * mode 0600. An existing file is reused, never overwritten, so a devnet restarted on the same
 * directory keeps its authorities (and a directory of real keys is never clobbered).
 * Errors name the path only: never a byte of the key.
 */

export async function ensureKeypairFile(path: string): Promise<Keypair> {
  const existing = await readKeypairFile(path);
  if (existing !== undefined) return existing;
  const keypair = Keypair.generate();
  const file = await open(path, 'wx', 0o600);
  try {
    await file.writeFile(JSON.stringify(Array.from(keypair.secretKey)));
  } finally {
    await file.close();
  }
  return keypair;
}

/** The keypair at `path`, or undefined when there is no file. */
export async function readKeypairFile(path: string): Promise<Keypair | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw invalidKeypairFile(path, `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'unknown error'})`);
  }
  let bytes: unknown;
  try {
    bytes = JSON.parse(text);
  } catch {
    throw invalidKeypairFile(path, 'is not JSON');
  }
  const valid = Array.isArray(bytes) && bytes.length === 64 && bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255);
  if (!valid) throw invalidKeypairFile(path, 'is not a JSON array of 64 integers 0..255');
  try {
    return Keypair.fromSecretKey(Uint8Array.from(bytes as number[]));
  } catch {
    throw invalidKeypairFile(path, 'holds a public key that does not match its secret key');
  }
}

/** A keypair the world wrote (world.json names it): a missing file is an error naming it. */
export async function loadKeypairFile(path: string): Promise<Keypair> {
  const keypair = await readKeypairFile(path);
  if (keypair === undefined) throw invalidKeypairFile(path, 'is missing: bootstrap the world again');
  return keypair;
}

function invalidKeypairFile(path: string, problem: string): DevnetError<'DEVNET__INVALID_OPTION'> {
  const reason = `keypair file ${path} ${problem}; delete it to let the devnet create a new one`;
  return new DevnetError('DEVNET__INVALID_OPTION', { option: 'dir', reason }, reason);
}
