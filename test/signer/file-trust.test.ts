import { chmodSync, chownSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import bs58 from 'bs58';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadAuthoritySigner } from '../../src/signer/open-signer.js';
import { isBridgeError } from '../../src/errors.js';
import { fixtureKeypairBytes, keypairDir } from '../support/keypair-files.js';
import { leakedFragments } from '../support/secret-fragments.js';
import { TOKEN_PIN } from '../support/softhsm.js';

/**
 * Issue 32 items 3 and 4: a key pasted into BRIDGE_AUTHORITY_KEYPAIR is refused without a
 * character of it, and files another account could change (the keypair, pin-source,
 * module-path, and the directories above them) are refused as ssh refuses them.
 */

// Another account than this process's and root: nobody.
const OTHER_UID = 65534;

async function problemOf(source: string): Promise<string> {
  try {
    await loadAuthoritySigner(source, {});
  } catch (err) {
    if (isBridgeError(err, 'CONFIG__INVALID') && err.context.problems.length === 1) return err.context.problems[0]!;
    throw err;
  }
  throw new Error('expected loadAuthoritySigner to throw CONFIG__INVALID');
}

let files: ReturnType<typeof keypairDir>;
beforeEach(() => {
  files = keypairDir();
});
afterEach(() => {
  files.remove();
});

describe('a key pasted into BRIDGE_AUTHORITY_KEYPAIR', () => {
  const secret = Uint8Array.from(fixtureKeypairBytes());
  it.each([
    ['the base58 secret key', bs58.encode(secret)],
    ['the JSON array of a keypair file', JSON.stringify(Array.from(secret))],
    ['the JSON array with spaces and a newline', `${JSON.stringify(Array.from(secret), null, 1)}\n`],
    ['the hex seed', Buffer.from(secret.subarray(0, 32)).toString('hex')],
    ['the base64 keypair', Buffer.from(secret).toString('base64')],
    ['a PEM private key', `-----BEGIN PRIVATE KEY-----\n${Buffer.from(secret).toString('base64')}\n-----END PRIVATE KEY-----`],
  ])('%s is refused, naming the variable and printing none of it', async (_, value) => {
    const line = await problemOf(value);
    expect(line).toMatch(/^BRIDGE_AUTHORITY_KEYPAIR: the value looks like a key itself \(\d+ characters, not printed\)/);
    expect(leakedFragments(line, [value])).toEqual([]);
  });

  it('a path without a slash is still a path', async () => {
    expect(await problemOf('authority.json')).toContain('keypair file "authority.json" cannot be read (ENOENT)');
  });
});

describe('files another account could change', () => {
  it('a keypair file owned by another user, even mode 0600', async () => {
    const path = files.copyFixture(0o600);
    chownSync(path, OTHER_UID, OTHER_UID);
    expect(await problemOf(path)).toBe(
      `BRIDGE_AUTHORITY_KEYPAIR: keypair file ${JSON.stringify(path)} is owned by uid ${OTHER_UID}, neither this process's (${process.getuid!()}) nor root; that account could change it (chown it)`,
    );
  });

  it('a keypair file mode 0600 in a directory others can write to', async () => {
    const dir = join(files.dir, 'shared');
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    const path = join(dir, 'authority.json');
    files.write('shared/authority.json', JSON.stringify(fixtureKeypairBytes()));
    expect(await problemOf(path)).toBe(
      `BRIDGE_AUTHORITY_KEYPAIR: keypair file ${JSON.stringify(path)} is in directory ${JSON.stringify(dir)}, which its group and others can write to (mode 0777) and so replace the file; chmod go-w it or move the file`,
    );
  });

  it('a keypair file mode 0600 in a directory its group can write to', async () => {
    const dir = join(files.dir, 'team');
    mkdirSync(dir);
    chmodSync(dir, 0o770);
    const path = files.write('team/authority.json', JSON.stringify(fixtureKeypairBytes()));
    expect(await problemOf(path)).toBe(
      `BRIDGE_AUTHORITY_KEYPAIR: keypair file ${JSON.stringify(path)} is in directory ${JSON.stringify(dir)}, which its group can write to (mode 0770) and so replace the file; chmod go-w it or move the file`,
    );
  });

  it('a keypair file mode 0600 in a directory owned by another user, even mode 0700', async () => {
    const dir = join(files.dir, 'theirs');
    mkdirSync(dir);
    const path = files.write('theirs/authority.json', JSON.stringify(fixtureKeypairBytes()));
    chmodSync(dir, 0o700);
    chownSync(dir, OTHER_UID, OTHER_UID);
    expect(await problemOf(path)).toBe(
      `BRIDGE_AUTHORITY_KEYPAIR: keypair file ${JSON.stringify(path)} is in directory ${JSON.stringify(dir)}, owned by uid ${OTHER_UID}, neither this process's (${process.getuid!()}) nor root; that account could replace the file (chown it or move the file)`,
    );
  });

  it('a directory owned by root, mode 0755, is accepted (a mounted secret volume)', async () => {
    const dir = join(files.dir, 'secrets');
    mkdirSync(dir, { mode: 0o755 });
    chownSync(dir, 0, 0);
    const path = files.write('secrets/authority.json', JSON.stringify(fixtureKeypairBytes()));
    expect((await loadAuthoritySigner(path, {})).signer.describe()).toEqual({ kind: 'file' });
  });

  it('a pin-source file writable by its group', async () => {
    const pin = files.write('pin', `${TOKEN_PIN}\n`, 0o660);
    const line = await problemOf(`pkcs11:token=bridge;object=a?module-path=/nonexistent/lib.so&pin-source=file:${pin}`);
    expect(line).toBe(
      `BRIDGE_AUTHORITY_KEYPAIR: PKCS#11 URI: pin-source file ${JSON.stringify(pin)} is writable by its group (mode 0660); restrict it with chmod 600`,
    );
  });

  it('a sticky shared directory (like /tmp) is accepted', async () => {
    const dir = join(files.dir, 'sticky');
    mkdirSync(dir);
    chmodSync(dir, 0o1777);
    const path = files.write('sticky/authority.json', JSON.stringify(fixtureKeypairBytes()));
    expect((await loadAuthoritySigner(path, {})).signer.describe()).toEqual({ kind: 'file' });
  });

  it('a link into a directory others can write to, found through the link', async () => {
    const dir = join(files.dir, 'shared');
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    const target = files.write('shared/authority.json', JSON.stringify(fixtureKeypairBytes()));
    const link = join(files.dir, 'authority-link.json');
    symlinkSync(target, link);
    expect(await problemOf(link)).toContain(`is in directory ${JSON.stringify(dir)}, which its group and others can write to`);
  });

  it('a pin-source file writable by others', async () => {
    const pin = files.write('pin', `${TOKEN_PIN}\n`, 0o606);
    const line = await problemOf(`pkcs11:token=bridge;object=a?module-path=/nonexistent/lib.so&pin-source=file:${pin}`);
    expect(line).toBe(
      `BRIDGE_AUTHORITY_KEYPAIR: PKCS#11 URI: pin-source file ${JSON.stringify(pin)} is writable by others (mode 0606); restrict it with chmod 600`,
    );
  });

  it('a pin-source file owned by another user', async () => {
    const pin = files.write('pin', `${TOKEN_PIN}\n`, 0o600);
    chownSync(pin, OTHER_UID, OTHER_UID);
    expect(await problemOf(`pkcs11:token=bridge;object=a?module-path=/nonexistent/lib.so&pin-source=${pin}`)).toContain(
      `pin-source file ${JSON.stringify(pin)} is owned by uid ${OTHER_UID}`,
    );
  });

  it('a module-path library others can write to', async () => {
    const library = files.write('libvendor.so', 'not a library', 0o666);
    expect(await problemOf(`pkcs11:token=bridge;object=a?module-path=${library}&pin-value=1234`)).toBe(
      `BRIDGE_AUTHORITY_KEYPAIR: PKCS#11 URI: module-path ${JSON.stringify(library)} is writable by its group and others (mode 0666); restrict it with chmod 600`,
    );
  });

  it('a module-path library in a directory others can write to', async () => {
    const dir = join(files.dir, 'libs');
    mkdirSync(dir);
    chmodSync(dir, 0o757);
    const library = files.write('libs/libvendor.so', 'not a library', 0o644);
    expect(await problemOf(`pkcs11:token=bridge;object=a?module-path=${library}&pin-value=1234`)).toContain(
      `is in directory ${JSON.stringify(dir)}, which others can write to (mode 0757)`,
    );
  });
});
