import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { externalPackages, nodeFetchIsNodesFetch, targetFromEngines } from '../../scripts/bundle-server.mjs';
import { ensureBuilt } from '../support/server-process.js';

/**
 * One build (issue 51): dist/ holds what runs, the server's and the ops CLI's bundles with their
 * chunks, and nothing else; what the bundle leaves out and the Node it targets are derived from
 * package.json and src/, and node-fetch is Node's own fetch.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-bundle-'));
  dirs.push(dir);
  return dir;
}

function write(dir: string, path: string, text: string): void {
  mkdirSync(join(dir, path, '..'), { recursive: true });
  writeFileSync(join(dir, path), text);
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? files(join(dir, entry.name)) : [join(dir, entry.name)]));
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('dist/ after a build', () => {
  beforeAll(() => ensureBuilt(), 120_000);

  it('holds the two entries and their chunks, nothing tsc emitted and no source map', () => {
    const dist = join(ROOT, 'dist');
    const stray = files(dist)
      .map((path) => relative(dist, path))
      .filter((path) => path !== 'index.js' && path !== 'ops/cli.js' && !/^chunks\/[\w-]+\.js$/.test(path));
    expect(stray).toEqual([]);
  });

  it("holds none of node-fetch's code: web3.js's import of it is Node's fetch", () => {
    const dist = join(ROOT, 'dist');
    const bundled = files(dist).map((path) => readFileSync(path, 'utf8'));
    expect(bundled.some((text) => text.includes('// node_modules/node-fetch/'))).toBe(false);
    expect(bundled.filter((text) => text.includes('// node-fetch-is-nodes-fetch:node-fetch'))).toHaveLength(1);
  });
});

describe('nodeFetchIsNodesFetch', () => {
  it("answers `import fetch from 'node-fetch'` with globalThis.fetch, passing both arguments", async () => {
    const dir = tempDir();
    write(dir, 'entry.mjs', "import fetch from 'node-fetch'; export default fetch;");
    await build({
      absWorkingDir: dir,
      entryPoints: ['entry.mjs'],
      outfile: join(dir, 'out.mjs'),
      bundle: true,
      format: 'esm',
      platform: 'node',
      plugins: [nodeFetchIsNodesFetch],
      logLevel: 'silent',
    });
    const calls: unknown[][] = [];
    const original = globalThis.fetch;
    globalThis.fetch = ((...args: unknown[]) => {
      calls.push(args);
      return Promise.resolve(new Response('ok'));
    }) as typeof fetch;
    try {
      const { default: bundledFetch } = (await import(pathToFileURL(join(dir, 'out.mjs')).href)) as { default: typeof fetch };
      expect(await (await bundledFetch('http://127.0.0.1:9/x', { method: 'POST' })).text()).toBe('ok');
    } finally {
      globalThis.fetch = original;
    }
    expect(calls).toEqual([['http://127.0.0.1:9/x', { method: 'POST' }]]);
  });
});

describe('externalPackages', () => {
  it('leaves out a native addon and a package src/ loads only with import(), nothing else', () => {
    const dir = tempDir();
    write(dir, 'package.json', JSON.stringify({ dependencies: { bundled: '1', lazy: '1', mixed: '1', typed: '1', native: '1' } }));
    write(dir, 'src/a.ts', "import { x } from 'bundled';\nimport type { T } from 'typed';\nexport const f = () => import('lazy');\n");
    write(dir, 'src/deep/b.ts', "import { y } from 'mixed';\nexport const g = () => [import('mixed'), import('typed')];\n");
    write(dir, 'node_modules/native/binding.gyp', '{}');
    expect(externalPackages(dir)).toEqual(['lazy', 'native', 'typed']);
  });

  it('for this repository: the key services, the inspector and the PKCS#11 addon', () => {
    expect(externalPackages()).toEqual(['@aws-sdk/client-kms', '@google-cloud/kms', '@statelyai/inspect', 'pkcs11js']);
  });
});

describe('targetFromEngines', () => {
  it('is the oldest Node that engines.node names', () => {
    const dir = tempDir();
    write(dir, 'package.json', JSON.stringify({ engines: { node: '^24.0.0 || ^22.13.0' } }));
    expect(targetFromEngines(dir)).toBe('node22.13');
  });

  it('refuses a package.json without engines.node, naming it', () => {
    const dir = tempDir();
    write(dir, 'package.json', '{}');
    expect(() => targetFromEngines(dir)).toThrow('package.json names no Node version in engines.node');
  });

  it("for this repository: package.json's engines", () => {
    expect(targetFromEngines()).toBe('node22.13');
  });
});
