import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The committed throwaway test keypair (see test/fixtures/README.md). */
const FIXTURE_KEYPAIR_PATH = fileURLToPath(new URL('../fixtures/authority-keypair.json', import.meta.url));
export const FIXTURE_PUBLIC_KEY = 'Etc2sjrkpiUQAEgYv8EzRAyG51gMZ1LdnAuN2YZQg8D6';

export function fixtureKeypairBytes(): number[] {
  return JSON.parse(readFileSync(FIXTURE_KEYPAIR_PATH, 'utf8')) as number[];
}

/** A temporary directory for keypair files; `remove()` in afterEach. */
export function keypairDir() {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-keypair-'));
  return {
    dir,
    /** Writes `content` as a file with `mode` and returns its path. */
    write(name: string, content: string, mode = 0o600): string {
      const path = join(dir, name);
      writeFileSync(path, content);
      chmodSync(path, mode);
      return path;
    },
    /** A copy of the fixture keypair with `mode` (git does not keep modes). */
    copyFixture(mode = 0o600): string {
      const path = join(dir, 'authority.json');
      copyFileSync(FIXTURE_KEYPAIR_PATH, path);
      chmodSync(path, mode);
      return path;
    },
    remove(): void {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
