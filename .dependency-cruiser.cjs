/**
 * The layers of src/ that a maintainer reads in order (docs/architecture.md), held by
 * dependency-cruiser: `npm run lint:deps`, and test/chain/layers.test.ts in the suite.
 * test/architecture.test.ts holds the rest of the import rules (the port, the signer, the leaves).
 *
 * The chain client (src/chain/client/) from the bottom up: each layer imports only the layers
 * below it, never one above.
 */
const CLIENT = '^src/chain/client/';

/** Bottom first. A file's layer is the first pattern it matches, in this order from the most specific. */
const CLIENT_LAYERS = [
  { name: 'read', path: `${CLIENT}read/` },
  { name: 'budget', path: `${CLIENT}budget/` },
  { name: 'nonce', path: `${CLIENT}nonce/` },
  { name: 'submit/build', path: `${CLIENT}submit/build/` },
  { name: 'submit/send', path: `${CLIENT}submit/send/` },
  { name: 'submit/watch', path: `${CLIENT}submit/watch/` },
  { name: 'submit/settle', path: `${CLIENT}submit/settle/` },
  { name: 'submit', path: `${CLIENT}submit/[^/]+$` },
];

/** A rule per layer: nothing in it imports a layer above it (nor the client's top files, the wiring). */
const layerRules = CLIENT_LAYERS.map((layer, index) => ({
  name: `chain-client-layer-${layer.name.replace('/', '-')}`,
  comment: `src/chain/client/${layer.name} imports only the layers below it (${
    CLIENT_LAYERS.slice(0, index)
      .map(({ name }) => name)
      .join(', ') || 'none'
  }): docs/architecture.md, "The chain client's layers"`,
  severity: 'error',
  from: { path: layer.path },
  to: { path: [...CLIENT_LAYERS.slice(index + 1).map(({ path }) => path), `${CLIENT}[^/]+$`] },
}));

module.exports = {
  forbidden: [
    {
      name: 'chain-not-to-config',
      comment: 'src/chain/ never imports src/config/: the configuration imports what the chain defines, not the reverse',
      severity: 'error',
      from: { path: '^src/chain/' },
      to: { path: '^src/config/' },
    },
    {
      name: 'chain-not-to-machines-or-http',
      comment: 'src/chain/ imports neither the crank (src/machines/) nor the HTTP layer: dependencies point inward',
      severity: 'error',
      from: { path: '^src/chain/' },
      to: { path: '^src/(machines|http)/' },
    },
    {
      name: 'nothing-imports-http',
      comment: 'nothing outside src/http/ imports it but the wiring (src/index.ts)',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(http/|index\\.ts$)' },
      to: { path: '^src/http/' },
    },
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
/** For test/chain/layers.test.ts, which checks every layer has its rule (dependency-cruiser ignores it: not enumerable). */
Object.defineProperty(module.exports, 'clientLayers', { value: CLIENT_LAYERS, enumerable: false });
