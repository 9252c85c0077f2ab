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
 * ./authority.json: it prints the authority's base58 public key, leaves every file it wrote
 * readable by that user only, and ends by destroying the plaintext ./authority.json (issue 40):
 * the token is then the key's only copy there. The one substitution: the image's /app is this checkout.
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
  return block![1]!.replaceAll('/app', ROOT);
}

it('the SoftHSM recipe works as written for a user that is not root and prints the key to register', async () => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'bridge-recipe-'));
  const script = join(dir, 'recipe.sh');
  writeFileSync(script, recipe());
  copyFileSync(FIXTURE, join(dir, 'authority.json'));
  chmodSync(join(dir, 'authority.json'), 0o600);
  for (const path of [dir, join(dir, 'authority.json')]) chownSync(path, NOBODY, NOBODY);
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, TOKEN_PIN: 'pin-recipe-1234', TOKEN_SO_PIN: 'so-pin-recipe-5678' };
  const { stdout } = await execFileAsync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', 'bash', '-euo', 'pipefail', script], { cwd: dir, env, timeout: RECIPE_TIMEOUT_MS });
  expect(stdout).toContain(`${FIXTURE_PUBLIC_KEY}\n(held by the PKCS#11 token "bridge")`);
  expect(existsSync(join(dir, 'authority.pem'))).toBe(false);
  expect(existsSync(join(dir, 'authority.json')), 'the plaintext keypair is destroyed').toBe(false);
  for (const written of ['softhsm', 'softhsm/pin', 'softhsm/softhsm2.conf', 'softhsm/tokens']) {
    expect((statSync(join(dir, written)).mode & 0o077).toString(8), `${written} is this user's only`).toBe('0');
  }
}, 120_000);
