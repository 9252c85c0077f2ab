import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * scripts/prepare.mjs as npm runs it after `npm ci --omit=dev` (npm_config_omit=dev) or with
 * NODE_ENV=production: without dist/ the install fails with one line (issue 40: it exited 0 and
 * `npm start` died later with MODULE_NOT_FOUND); with dist/ it builds nothing.
 * test/install/runtime-install.test.ts runs the whole production install.
 */

const PREPARE = fileURLToPath(new URL('../../scripts/prepare.mjs', import.meta.url));
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function checkout(withDist: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-prepare-'));
  dirs.push(dir);
  cpSync(PREPARE, join(dir, 'prepare.mjs'));
  if (withDist) {
    mkdirSync(join(dir, 'dist'));
    writeFileSync(join(dir, 'dist', 'index.js'), '');
  }
  return dir;
}

function prepare(dir: string, env: Record<string, string>) {
  return spawnSync(process.execPath, ['prepare.mjs'], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', timeout: 10_000 });
}

describe('scripts/prepare.mjs in a production install', () => {
  it.each<Record<string, string>>([{ npm_config_omit: 'dev' }, { npm_config_omit: 'dev optional' }, { NODE_ENV: 'production' }])(
    'without dist/: exit 1, one line on stderr (%o)',
    (env) => {
      const run = prepare(checkout(false), env);
      expect(run.status).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        'prepare: production install without dist/index.js: `npm start` could not run. Build dist/ with a full `npm ci` (or `npm run build`) on a build machine, copy it here with ui/, and install again\n',
      );
    },
  );

  it('with dist/: exit 0, nothing built', () => {
    const run = prepare(checkout(true), { npm_config_omit: 'dev' });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('prepare: production install: nothing built; dist/ is the one already here\n');
  });
});
