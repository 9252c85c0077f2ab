import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadAuthorityKeypair } from '../../src/signer/open-signer.js';
import { isBridgeError } from '../../src/errors.js';
import { FIXTURE_PUBLIC_KEY, fixtureKeypairBytes, keypairDir } from '../support/keypair-files.js';

const EXPECTED = 'expected a JSON array of 64 integers 0..255 (Solana CLI keypair format)';
const MARKER = 'MARKER-7f3a9c-DO-NOT-LEAK';

function problemOf(path: string): string {
  try {
    loadAuthorityKeypair(path);
  } catch (err) {
    if (isBridgeError(err, 'CONFIG__INVALID') && err.context.problems.length === 1) {
      expect(err.message).toBe(err.context.problems[0]);
      expect(err.cause).toBeUndefined();
      return err.context.problems[0] ?? '';
    }
    throw err;
  }
  throw new Error('expected loadAuthorityKeypair to throw CONFIG__INVALID');
}

let files: ReturnType<typeof keypairDir>;
beforeEach(() => {
  files = keypairDir();
});
afterEach(() => {
  files.remove();
});

describe('loadAuthorityKeypair', () => {
  it('loads a Solana CLI keypair file whose halves match', () => {
    const { keypair, warnings } = loadAuthorityKeypair(files.copyFixture(0o600));
    expect(keypair.publicKey.toBase58()).toBe(FIXTURE_PUBLIC_KEY);
    expect(Array.from(keypair.secretKey)).toEqual(fixtureKeypairBytes());
    expect(warnings).toEqual([]);
  });

  it.each(['0644', '0640', '0604'])('warns, but loads, when the file mode is %s (readable by group or others)', (modeText) => {
    const mode = Number.parseInt(modeText, 8);
    const path = files.copyFixture(mode);
    const { keypair, warnings } = loadAuthorityKeypair(path);
    expect(keypair.publicKey.toBase58()).toBe(FIXTURE_PUBLIC_KEY);
    expect(warnings).toEqual([
      `BRIDGE_AUTHORITY_KEYPAIR: keypair file ${JSON.stringify(path)} is readable by group or others (mode ${modeText}); restrict it with chmod 600`,
    ]);
  });

  it('does not warn for 0400', () => {
    expect(loadAuthorityKeypair(files.copyFixture(0o400)).warnings).toEqual([]);
  });

  it('follows a symlink (secret volumes mount files through links)', () => {
    const target = files.copyFixture();
    const link = join(files.dir, 'link.json');
    symlinkSync(target, link);
    expect(loadAuthorityKeypair(link).keypair.publicKey.toBase58()).toBe(FIXTURE_PUBLIC_KEY);
  });
});

describe('loadAuthorityKeypair: refusals name the variable and the path, never the content', () => {
  it('a missing file', () => {
    const path = join(files.dir, 'absent.json');
    expect(problemOf(path)).toBe(
      `BRIDGE_AUTHORITY_KEYPAIR: keypair file ${JSON.stringify(path)} cannot be read (ENOENT); mount the authority keypair there or fix the path`,
    );
  });

  it('a dangling symlink', () => {
    const link = join(files.dir, 'dangling.json');
    symlinkSync(join(files.dir, 'nowhere.json'), link);
    expect(problemOf(link)).toContain('cannot be read (ENOENT)');
  });

  it.each([
    ['0602', 'others'],
    ['0620', 'its group'],
    ['0666', 'its group and others'],
    ['0777', 'its group and others'],
  ])('a file writable by group or others (mode %s): another account could swap the key', (modeText, writers) => {
    const path = files.copyFixture(Number.parseInt(modeText, 8));
    expect(problemOf(path)).toBe(
      `BRIDGE_AUTHORITY_KEYPAIR: keypair file ${JSON.stringify(path)} is writable by ${writers} (mode ${modeText}); restrict it with chmod 600`,
    );
  });

  it('a directory', () => {
    const path = join(files.dir, 'dir.json');
    mkdirSync(path);
    expect(problemOf(path)).toBe(`BRIDGE_AUTHORITY_KEYPAIR: keypair file ${JSON.stringify(path)} is not a regular file`);
  });

  it('a file far larger than any keypair', () => {
    const content = `[${'1,'.repeat(40_000)}1]`;
    const path = files.write('big.json', content);
    expect(problemOf(path)).toBe(
      `BRIDGE_AUTHORITY_KEYPAIR: keypair file ${JSON.stringify(path)} is ${content.length} bytes; a Solana CLI keypair file is a JSON array of 64 integers (under 1 KiB)`,
    );
  });

  it.each([
    ['not JSON', `${MARKER} [1,2,3`, 'is not valid JSON'],
    ['JSON that is not an array', JSON.stringify({ secret: MARKER }), 'holds a JSON object'],
    ['JSON null', 'null', 'holds a JSON null'],
    ['a string', JSON.stringify(MARKER), 'holds a JSON string'],
    ['63 elements', JSON.stringify(fixtureKeypairBytes().slice(0, 63)), 'holds an array of 63 elements'],
    ['65 elements', JSON.stringify([...fixtureKeypairBytes(), 1]), 'holds an array of 65 elements'],
    ['an element 256 (Uint8Array.from would wrap it to 0)', JSON.stringify(replaceAt(5, 256)), 'has element 5 that is not an integer 0..255'],
    ['a negative element', JSON.stringify(replaceAt(0, -1)), 'has element 0 that is not an integer 0..255'],
    ['a fractional element', JSON.stringify(replaceAt(63, 1.5)), 'has element 63 that is not an integer 0..255'],
    ['a string element', JSON.stringify(replaceAt(10, MARKER)), 'has element 10 that is not an integer 0..255'],
    ['a numeric string element', JSON.stringify(replaceAt(11, '12')), 'has element 11 that is not an integer 0..255'],
  ])('%s', (_name, content, problem) => {
    const path = files.write('authority.json', content);
    const line = problemOf(path);
    expect(line).toBe(`BRIDGE_AUTHORITY_KEYPAIR: keypair file ${JSON.stringify(path)} ${problem}; ${EXPECTED}`);
    expect(line).not.toContain(MARKER);
  });

  it('a public half that does not match the secret half', () => {
    const bytes = fixtureKeypairBytes();
    bytes[40] = ((bytes[40] ?? 0) + 1) % 256;
    const path = files.write('authority.json', JSON.stringify(bytes));
    const line = problemOf(path);
    expect(line).toBe(
      `BRIDGE_AUTHORITY_KEYPAIR: keypair file ${JSON.stringify(path)} has a public key (elements 32..63) that does not match its secret key (elements 0..31); the file is corrupt or not a Solana CLI keypair`,
    );
    expect(line).not.toContain(bytes.slice(0, 4).join(','));
  });
});

function replaceAt(index: number, value: unknown): unknown[] {
  const bytes: unknown[] = fixtureKeypairBytes();
  bytes[index] = value;
  return bytes;
}
