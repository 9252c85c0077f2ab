#!/usr/bin/env node
// npm's `prepare`, run after every `npm ci` / `npm install` in a checkout. A full install builds
// what `npm test` and `npm run demo` run: dist/ (the server) and dist-devnet/ (the devnet).
// A production install (`npm ci --omit=dev`, or NODE_ENV=production, which npm reports to this
// script as npm_config_omit / NODE_ENV) has no compiler and ships only the server: it builds
// nothing, runs the dist/ a full install built (docs/operating.md, "Installing on a VM"), and
// fails when there is none.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const omitted = (process.env.npm_config_omit ?? '').split(/[\s,]+/);
const production = omitted.includes('dev') || process.env.NODE_ENV === 'production';

// Without dist/ a production install would succeed and `npm start` die later on MODULE_NOT_FOUND:
// it fails here instead, with one line saying what to copy.
if (production) {
  if (!existsSync('dist/index.js')) {
    console.error(
      'prepare: production install without dist/index.js: `npm start` could not run. Build dist/ with a full `npm ci` (or `npm run build`) on a build machine, copy it here with ui/, and install again',
    );
    process.exit(1);
  }
  console.log('prepare: production install: nothing built; dist/ is the one already here');
  process.exit(0);
}

for (const script of ['build', 'build:devnet']) {
  // npm_execpath: the npm that runs this install, whichever is first on PATH.
  const npm = process.env.npm_execpath;
  const run =
    npm === undefined
      ? spawnSync('npm', ['run', script], { stdio: 'inherit' })
      : spawnSync(process.execPath, [npm, 'run', script], { stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
