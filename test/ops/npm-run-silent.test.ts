import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { FIXTURE_PUBLIC_KEY, keypairDir } from '../support/keypair-files.js';
import { ensureBuilt } from '../support/server-process.js';

/**
 * docs/operating.md ("Operating"): through `npm run`, npm's banner comes before the command's
 * output on stdout, so `--json` is piped as `npm run -s ops -- ... --json`. Both halves of that
 * sentence, with the npm this checkout runs.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const execFileAsync = promisify(execFile);
const NPM_TIMEOUT_MS = 30_000;

it(
  "npm run -s ops -- signer --json prints JSON alone; without -s npm's banner comes first",
  async () => {
    ensureBuilt();
    const files = keypairDir();
    try {
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', BRIDGE_AUTHORITY_KEYPAIR: files.copyFixture(0o600) };
      const silent = await execFileAsync('npm', ['run', '-s', 'ops', '--', 'signer', '--json'], { cwd: ROOT, env, timeout: NPM_TIMEOUT_MS });
      expect(JSON.parse(silent.stdout)).toEqual({ authority: FIXTURE_PUBLIC_KEY, signer: { kind: 'file' } });
      const loud = await execFileAsync('npm', ['run', 'ops', '--', 'signer', '--json'], { cwd: ROOT, env, timeout: NPM_TIMEOUT_MS });
      expect(loud.stdout).toMatch(/^\n?> bridge-operator-server@\S+ ops\n/);
      expect(() => JSON.parse(loud.stdout)).toThrow();
    } finally {
      files.remove();
    }
  },
  2 * NPM_TIMEOUT_MS,
);
