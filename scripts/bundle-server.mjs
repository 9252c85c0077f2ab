#!/usr/bin/env node
// dist/ is what runs, and nothing else: the server's entry (dist/index.js) and the ops CLI's
// (dist/ops/cli.js), each one esbuild bundle of src/ and the packages it uses, sharing their
// chunks (dist/chunks/: what loads only when configured, such as the crank or a signer, or when
// asked, such as the machine's graph). Loading a few files instead of
// some 750 modules is most of a start (docs/operating.md, "Start-up time"). `npm run build` runs
// tsc first as a type check only: it emits nothing.
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * web3.js imports node-fetch for a Connection built without a fetch of its own. Every Connection
 * here is given one (src/chain/rpc/endpoint.ts), so Node's fetch stands in for node-fetch, whose
 * URL tables (1.4 MiB kept) would be loaded for nothing, and whose bundled whatwg-url prints
 * Node 24's punycode deprecation warning.
 */
export const nodeFetchIsNodesFetch = {
  name: 'node-fetch-is-nodes-fetch',
  setup(build) {
    build.onResolve({ filter: /^node-fetch$/ }, () => ({ path: 'node-fetch', namespace: 'node-fetch-is-nodes-fetch' }));
    build.onLoad({ filter: /.*/, namespace: 'node-fetch-is-nodes-fetch' }, () => ({
      contents: 'export default (input, init) => globalThis.fetch(input, init);',
      loader: 'js',
    }));
  },
};

/**
 * The packages left outside the bundle, loaded from node_modules/, derived from package.json and
 * src/ rather than listed: a native addon (a binding.gyp of its own: its compiled file cannot be
 * bundled), and a package src/ loads only with `import()` (a key service's SDK, the inspector:
 * loaded only when configured, and some read files of their own package at run time).
 */
export function externalPackages(dir = root) {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const sources = sourceFiles(join(dir, 'src')).map((file) => readFileSync(file, 'utf8'));
  const staticImport = (name) => sources.some((text) => text.includes(`from '${name}'`) && !isTypeOnly(text, name));
  const dynamicImport = (name) => sources.some((text) => text.includes(`import('${name}')`));
  const native = (name) => {
    try {
      statSync(join(dir, 'node_modules', name, 'binding.gyp'));
      return true;
    } catch {
      return false;
    }
  };
  return Object.keys(pkg.dependencies ?? {})
    .filter((name) => native(name) || (dynamicImport(name) && !staticImport(name)))
    .sort();
}

function isTypeOnly(text, name) {
  const lines = text.split('\n').filter((line) => line.includes(`from '${name}'`));
  return lines.every((line) => /^import type /.test(line.trim()));
}

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** esbuild's target from `engines`: the oldest Node major it names (`^22.13.0 || ^24` -> node22.13). */
export function targetFromEngines(dir = root) {
  const { engines } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const versions = [...String(engines?.node ?? '').matchAll(/(\d+)\.(\d+)(?:\.\d+)?/g)].map((m) => [Number(m[1]), Number(m[2])]);
  if (versions.length === 0) throw new Error('bundle-server: package.json names no Node version in engines.node; the bundle needs one as its target');
  const [major, minor] = versions.sort((a, b) => a[0] - b[0] || a[1] - b[1])[0];
  return `node${major}.${minor}`;
}

async function bundle() {
  const { metafile } = await build({
    absWorkingDir: root,
    entryPoints: { index: 'src/index.ts', 'ops/cli': 'src/ops/cli.ts' },
    outdir: 'dist',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: targetFromEngines(),
    // Off unless asked (docs/development.md, "Source maps"): applied, they cost ~25 MiB of RSS.
    sourcemap: process.env.BRIDGE_BUNDLE_SOURCEMAP === '1' ? 'linked' : false,
    external: externalPackages(),
    plugins: [nodeFetchIsNodesFetch],
    // The bundled CommonJS packages require Node's built-ins; an ES module has no `require` of its own.
    banner: { js: "import { createRequire as __bridgeCreateRequire } from 'node:module'; const require = __bridgeCreateRequire(import.meta.url);" },
    logLevel: 'warning',
    metafile: true,
  });
  removeAllBut(new Set(Object.keys(metafile.outputs).map((path) => resolve(root, path))));
}

/**
 * Whatever else is in dist/ goes once this build is written, not before: a server started from
 * the previous dist/index.js (a test's, while another rebuilds) keeps finding its chunks
 * meanwhile. That includes the modules tsc emitted before it only type-checked.
 */
function removeAllBut(written) {
  const dist = join(root, 'dist');
  for (const path of allFiles(dist)) if (!written.has(path)) rmSync(path);
  for (const dir of allDirs(dist).reverse()) if (readdirSync(dir).length === 0) rmSync(dir, { recursive: true });
}

function allFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? allFiles(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

function allDirs(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => [join(dir, entry.name), ...allDirs(join(dir, entry.name))]);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await bundle();
