import { execFile } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, expect, it } from 'vitest';
import { FIXTURE_PUBLIC_KEY } from '../support/keypair-files.js';
import { ensureBuilt } from '../support/server-process.js';

/**
 * Issue 32 item 5: docs/operating.md's SoftHSM recipe, run as written by a user that is not root
 * (the image runs as `node`; here `nobody`, through setpriv) in an empty directory holding only
 * ./authority.json: it checks the file's key and then the token's against REGISTERED_AUTHORITY,
 * leaves every file it wrote readable by that user only, and ends by destroying the plaintext
 * ./authority.json (issue 40): the token is then the key's only copy there. Issue 49: a failed
 * check or a failing command stops it with the file intact, run as pasted (plain `sh`, the
 * block's own `set -eu`). The one substitution: the image's /app is this checkout.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OPERATING = join(ROOT, 'docs', 'operating.md');
const MARKER = '<!-- test/integration/hsm-recipe.test.ts runs the next block as written -->';
const FIXTURE = join(ROOT, 'test', 'fixtures', 'authority-keypair.json');
const NOBODY = 65534;
const RECIPE_TIMEOUT_MS = 60_000;
const execFileAsync = promisify(execFile);

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function recipe(): string {
  const text = readFileSync(OPERATING, 'utf8');
  const start = text.indexOf(MARKER);
  expect(start, `docs/operating.md has no block marked ${MARKER}`).toBeGreaterThan(-1);
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(start + MARKER.length));
  expect(block).not.toBeNull();
  return block![1]!;
}

/**
 * The recipe in a fresh directory holding only ./authority.json, as `nobody`, pasted into a plain
 * `sh` (no -e given from outside: the block's own `set -eu` must stop it). `app`: what /app
 * stands for (the image's working directory), or null to keep /app as written (absent here, as
 * on a VM outside the image, where npm exits 254 without a word).
 */
async function runRecipe(registered: string, app: string | null): Promise<{ code: number; stdout: string; stderr: string }> {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'bridge-recipe-'));
  const script = join(dir, 'recipe.sh');
  writeFileSync(script, app === null ? recipe() : recipe().replaceAll('/app', app));
  copyFileSync(FIXTURE, join(dir, 'authority.json'));
  chmodSync(join(dir, 'authority.json'), 0o600);
  for (const path of [dir, join(dir, 'authority.json')]) chownSync(path, NOBODY, NOBODY);
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    TOKEN_PIN: 'pin-recipe-1234',
    TOKEN_SO_PIN: 'so-pin-recipe-5678',
    REGISTERED_AUTHORITY: registered,
  };
  return execFileAsync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', 'sh', script], {
    cwd: dir,
    env,
    timeout: RECIPE_TIMEOUT_MS,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code?: number; stdout?: string; stderr?: string }) => ({ code: err.code ?? -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' }),
  );
}

it('the SoftHSM recipe works as written for a user that is not root and says the token signs as the registered authority', async () => {
  const { code, stdout, stderr } = await runRecipe(FIXTURE_PUBLIC_KEY, ROOT);
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  expect(stdout).toContain(`the token signs as ${FIXTURE_PUBLIC_KEY}, the registered authority`);
  expect(existsSync(join(dir!, 'authority.pem'))).toBe(false);
  expect(existsSync(join(dir!, 'authority.json')), 'the plaintext keypair is destroyed').toBe(false);
  for (const written of ['softhsm', 'softhsm/pin', 'softhsm/softhsm2.conf', 'softhsm/tokens']) {
    expect((statSync(join(dir!, written)).mode & 0o077).toString(8), `${written} is this user's only`).toBe('0');
  }
}, 120_000);

it('stops before anything is written or destroyed when authority.json is not the registered authority', async () => {
  const other = 'Vote111111111111111111111111111111111111111';
  const { code, stderr } = await runRecipe(other, ROOT);
  expect(code).not.toBe(0);
  expect(stderr).toContain(`authority.json holds ${FIXTURE_PUBLIC_KEY}, not ${other}: stopped, nothing changed`);
  expect(readFileSync(join(dir!, 'authority.json'), 'utf8')).toBe(readFileSync(FIXTURE, 'utf8'));
  expect(existsSync(join(dir!, 'softhsm'))).toBe(false);
}, 120_000);

it('keeps authority.json when its check cannot run (no /app outside the image: npm fails without a word)', async () => {
  const { code, stderr } = await runRecipe(FIXTURE_PUBLIC_KEY, null);
  expect(code).not.toBe(0);
  expect(stderr).toContain(`not ${FIXTURE_PUBLIC_KEY}: stopped, nothing changed`);
  expect(readFileSync(join(dir!, 'authority.json'), 'utf8')).toBe(readFileSync(FIXTURE, 'utf8'));
}, 120_000);
