#!/usr/bin/env node
// The server's entry, dist/index.js, and the ops CLI's, dist/ops/cli.js: each one esbuild bundle
// of src/ and the packages it uses (npm run build, after tsc), sharing their chunks. Loading a
// few files instead of some 750 modules is most of a start: resolving and reading each module
// cost more than running it (docs/operating.md, "Start-up time"). dist/chunks/ holds what loads
// only when configured (the crank, a signer) or asked (the machine's graph). tsc still emits
// every other module; `npm run machine:export` runs from there unbundled.
//
// Left outside the bundle, loaded from node_modules as before: pkcs11js (a native addon), the
// cloud key services' SDKs and the XState inspector (each loaded only when configured).
import { readdirSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * web3.js imports node-fetch for a Connection built without a fetch of its own. Every Connection
 * here is given one (src/chain/rpc/endpoint.ts), so Node's fetch stands in for node-fetch, whose
 * URL tables (1.4 MiB kept) would be loaded for nothing.
 */
const nodeFetchIsNodesFetch = {
  name: 'node-fetch-is-nodes-fetch',
  setup(build) {
    build.onResolve({ filter: /^node-fetch$/ }, () => ({ path: 'node-fetch', namespace: 'node-fetch-is-nodes-fetch' }));
    build.onLoad({ filter: /.*/, namespace: 'node-fetch-is-nodes-fetch' }, () => ({
      contents: 'export default (input, init) => globalThis.fetch(input, init);',
      loader: 'js',
    }));
  },
};

const { metafile } = await build({
  absWorkingDir: root,
  entryPoints: { index: 'src/index.ts', 'ops/cli': 'src/ops/cli.ts' },
  outdir: 'dist',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  external: ['pkcs11js', '@aws-sdk/client-kms', '@google-cloud/kms', '@statelyai/inspect'],
  plugins: [nodeFetchIsNodesFetch],
  // The bundled CommonJS packages require Node's built-ins; an ES module has no `require` of its own.
  banner: { js: "import { createRequire as __bridgeCreateRequire } from 'node:module'; const require = __bridgeCreateRequire(import.meta.url);" },
  logLevel: 'warning',
  metafile: true,
});

// Chunks of earlier builds go once this one is written, not before: a server started from the
// previous dist/index.js (a test's, while another rebuilds) keeps finding its chunks meanwhile.
const written = new Set(Object.keys(metafile.outputs).map((path) => resolve(root, path)));
for (const name of readdirSync(`${root}dist/chunks`)) {
  const path = resolve(root, 'dist/chunks', name);
  if (!written.has(path)) rmSync(path);
}
