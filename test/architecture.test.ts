import { existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The import rules of docs/architecture.md, checked on the source text: the devnet is a product
 * beside the server (it may use the server's chain codecs; the server never uses the devnet),
 * dependencies point inward, and the server's production dependencies are exactly the packages
 * its own code imports, so `npm ci --omit=dev` and the image carry nothing only the devnet,
 * the tests or the benches need.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface SourceImport {
  file: string;
  /** Repository-relative path of a relative import's target, or the package name of a bare one. */
  target: string;
  bare: boolean;
}

function sourceFiles(dir: string, root = ROOT): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path, root);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

function importsOf(dir: string): SourceImport[] {
  return sourceFiles(dir).flatMap((file) => {
    // TypeScript's own scanner: static, dynamic and re-export imports, none from comments or strings.
    const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
    return importedFiles.map(({ fileName: specifier }) => {
      const bare = !specifier.startsWith('.');
      const target = bare ? packageName(specifier) : relative(ROOT, resolve(ROOT, dirname(file), specifier)).replace(/\.js$/, '.ts');
      return { file, target, bare };
    });
  });
}

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/**
 * The packages `file` loads before it runs: its static imports and theirs, followed through
 * src/ (an `import type` loads nothing; a dynamic `import()` loads when it runs).
 */
function packagesLoadedBy(file: string, seen = new Set<string>(), packages = new Set<string>()): Set<string> {
  if (seen.has(file)) return packages;
  seen.add(file);
  const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest);
  for (const statement of source.statements) {
    const isImport = ts.isImportDeclaration(statement) && statement.importClause?.isTypeOnly !== true;
    const isExport = ts.isExportDeclaration(statement) && !statement.isTypeOnly;
    if (!(isImport || isExport) || statement.moduleSpecifier === undefined || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const specifier = statement.moduleSpecifier.text;
    if (!specifier.startsWith('.')) packages.add(packageName(specifier));
    else packagesLoadedBy(relative(ROOT, resolve(ROOT, dirname(file), specifier)).replace(/\.js$/, '.ts'), seen, packages);
  }
  return packages;
}

/**
 * Every import cycle among the files, each as the files it runs through (Tarjan's strongly
 * connected components; type-only imports count: a cycle of types is a hub a newcomer cannot
 * read from one end).
 */
function importCycles(imports: readonly SourceImport[]): string[][] {
  const edges = new Map<string, string[]>();
  for (const { file, target, bare } of imports) if (!bare) edges.set(file, [...(edges.get(file) ?? []), target]);
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    order.set(file, order.size);
    low.set(file, order.get(file)!);
    stack.push(file);
    for (const target of edges.get(file) ?? []) {
      if (!order.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (stack.includes(target)) low.set(file, Math.min(low.get(file)!, order.get(target)!));
    }
    if (low.get(file) !== order.get(file)) return;
    const component = stack.splice(stack.indexOf(file));
    if (component.length > 1 || edges.get(file)?.includes(file)) cycles.push(component.sort());
  };
  for (const file of edges.keys()) if (!order.has(file)) visit(file);
  return cycles;
}

const under = (prefix: string) => (path: string) => path === prefix || path.startsWith(`${prefix}/`);

describe('architecture: who may import what', () => {
  const server = importsOf('src');
  const devnet = importsOf('devnet');

  it('nothing in src/ imports the devnet, and src/ imports nothing outside itself', () => {
    expect(server.filter(({ bare, target }) => !bare && !under('src')(target))).toEqual([]);
  });

  it('the devnet imports of the server only the chain codecs and the error type they throw', () => {
    const allowed = [
      under('src/chain/codec'),
      under('src/chain/pda.ts'),
      under('src/chain/types.ts'),
      under('src/chain/program-errors.ts'),
      under('src/errors.ts'),
    ];
    const fromServer = devnet.filter(({ bare, target }) => !bare && under('src')(target));
    expect(fromServer.length).toBeGreaterThan(0);
    expect(fromServer.filter(({ target }) => !allowed.some((rule) => rule(target)))).toEqual([]);
  });

  it('dependencies point inward: nothing imports src/http but src/index.ts; src/chain imports neither machines nor http', () => {
    expect(server.filter(({ file, target }) => under('src/http')(target) && !under('src/http')(file) && file !== 'src/index.ts')).toEqual([]);
    expect(server.filter(({ file, target }) => under('src/chain')(file) && (under('src/machines')(target) || under('src/http')(target)))).toEqual([]);
  });

  it('the crank sees the chain only through its port: src/machines/ imports of src/chain/ only src/chain/port/ and the records (types.ts)', () => {
    // The port is a folder, not a list: a file the crank needs joins src/chain/port/ (docs/architecture.md, "The crank's port").
    const allowed = [under('src/chain/port'), under('src/chain/types.ts')];
    const crank = server.filter(({ file }) => under('src/machines')(file));
    const fromChain = crank.filter(({ bare, target }) => !bare && under('src/chain')(target));
    expect(fromChain.length).toBeGreaterThan(0);
    expect(fromChain.filter(({ target }) => !allowed.some((rule) => rule(target)))).toEqual([]);
  });

  it('the port imports nothing below it: of src/chain/ only itself, the records and the protocol codecs; nothing of client/ or rpc/', () => {
    const allowed = [under('src/chain/port'), under('src/chain/types.ts'), under('src/chain/codec'), under('src/chain/program-errors.ts')];
    const fromPort = server.filter(({ file, bare, target }) => under('src/chain/port')(file) && !bare && under('src/chain')(target));
    expect(fromPort.length).toBeGreaterThan(0);
    expect(fromPort.filter(({ target }) => !allowed.some((rule) => rule(target)))).toEqual([]);
    // And what the port builds on never reaches below it either.
    const fromCodec = server.filter(
      ({ file, bare, target }) => (under('src/chain/codec')(file) || file === 'src/chain/program-errors.ts') && !bare && under('src/chain')(target),
    );
    expect(fromCodec.filter(({ target }) => !allowed.some((rule) => rule(target)))).toEqual([]);
  });

  it('no import points up: the shared leaves of src/ (domain, errors, failure policy, text, time) import no folder of src/', () => {
    const leaves = ['src/domain.ts', 'src/errors.ts', 'src/failure-policy.ts', 'src/text.ts', 'src/time.ts'];
    expect(server.filter(({ file, bare, target }) => leaves.includes(file) && !bare && !leaves.includes(target))).toEqual([]);
  });

  it('the signer is one folder beside the chain: src/signer/ imports nothing of chain, machines, http or config', () => {
    const outside = ['src/chain', 'src/machines', 'src/http', 'src/config'].map(under);
    expect(server.filter(({ file, bare, target }) => under('src/signer')(file) && !bare && outside.some((rule) => rule(target)))).toEqual([]);
  });

  it('a start loads the HTTP server alone: the Solana stack, the crank and the signers load only with runtime configuration', () => {
    // What a start pays before /health answers (docs/operating.md "Start-up time"); the rest is an import() of src/index.ts.
    const atStart = [...packagesLoadedBy('src/index.ts')].filter((name) => !name.startsWith('node:')).sort();
    expect(atStart).toEqual(['@fastify/basic-auth', '@fastify/static', 'bs58', 'close-with-grace', 'fastify', 'pino', 'prom-client', 'zod']);
  });

  it('no import cycles: every file of src/ and devnet/ can be read after the files it imports', () => {
    expect(importCycles(server)).toEqual([]);
    expect(importCycles(devnet)).toEqual([]);
  });

  it('the production dependencies are exactly the packages the server imports', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const imported = new Set(server.filter(({ bare, target }) => bare && !target.startsWith('node:')).map(({ target }) => target));
    expect(Object.keys(manifest.dependencies).sort()).toEqual([...imported].sort());
  });

  it('the devnet imports only production dependencies: the runtime it is checked against (litesvm, @solana/kit) stays in the tests', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const packages = new Set(devnet.filter(({ bare, target }) => bare && !target.startsWith('node:')).map(({ target }) => target));
    expect([...packages].filter((name) => !(name in manifest.dependencies))).toEqual([]);
  });

  it('the server build compiles src/ alone; the devnet has a build of its own', () => {
    const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
    const devnetBuild = JSON.parse(readFileSync(join(ROOT, 'devnet', 'tsconfig.json'), 'utf8')) as { compilerOptions: { outDir: string } };
    expect(build.include).toEqual(['src']);
    expect(devnetBuild.compilerOptions.outDir).toBe('../dist-devnet');
  });
});

/** One entry of a followed path: its number, its file, and the earlier step it says it is reached from, and how. */
interface Step {
  number: number;
  file: string;
  from?: { step: number; how: 'imports' | 'imported by' };
}

/**
 * Each path of docs/architecture.md "Following the code": its numbered entries and the count its
 * text claims. An entry after the first names the earlier step it is reached from and how:
 * `4. src/machines/delays.ts (imported by 2): ...` (step 2 imports it) or
 * `13. src/http/routes.ts (imports 1): ...` (it imports step 1).
 */
function followedPaths(): Array<{ heading: string; steps: Step[]; claimed: number | undefined }> {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const section = doc.slice(doc.indexOf('\n## Following the code\n'));
  return section
    .split('\n### ')
    .slice(1)
    .map((part) => ({
      heading: part.slice(0, part.indexOf('\n')),
      steps: [...part.matchAll(/^(\d+)\. ((?:src|devnet)\/[\w./-]+\.ts)\b(?: \((imports|imported by) (\d+)\))?/gm)].map((match) => ({
        number: Number(match[1]),
        file: match[2]!,
        ...(match[3] === undefined ? {} : { from: { step: Number(match[4]), how: match[3] as 'imports' | 'imported by' } }),
      })),
      claimed: Number(/\*\*(\d+) files\*\*/.exec(part)?.[1] ?? Number.NaN) || undefined,
    }));
}

/** Why `step` is not the hop it says (undefined when it is), with the import the source has instead. */
function wrongHop(step: Step, steps: readonly Step[], imports: ReadonlySet<string>): string | undefined {
  const { number, file, from } = step;
  const name = (path: string) => path.slice(path.lastIndexOf('/') + 1);
  if (from === undefined)
    return number === 1 ? undefined : `${number}. ${file} names no earlier step it is reached from: write "(imports K)" or "(imported by K)"`;
  if (number === 1) return `1. ${file} is where the path starts: it names no step`;
  const earlier = steps.find((other) => other.number === from.step);
  if (earlier === undefined || from.step >= number) return `${number}. ${file} (${from.how} ${from.step}): step ${from.step} is not listed before it`;
  const forward = imports.has(`${file} ${earlier.file}`);
  const backward = imports.has(`${earlier.file} ${file}`);
  const stated = from.how === 'imports' ? forward : backward;
  if (stated) return undefined;
  const actually = forward
    ? `it imports ${name(earlier.file)}: "(imports ${from.step})"`
    : backward
      ? `${name(earlier.file)} imports it: "(imported by ${from.step})"`
      : 'neither imports the other: a file between them is skipped';
  return `${number}. ${file} (${from.how} ${from.step}, ${earlier.file}): no such import; ${actually}`;
}

// Issue 35 set 12. The cycle has since gained the lease and the guards' own file, the failed send the sender's split and the two hops this check found it skipping (docs/architecture.md, "Following the code").
const MAX_FOLLOWED_FILES = 16;

describe('docs/architecture.md: the paths it follows are the ones the imports give', () => {
  const imports = new Set(importsOf('src').flatMap(({ file, target, bare }) => (bare ? [] : [`${file} ${target}`])));
  const paths = followedPaths();

  it('follows the crank cycle, the failed send and one vote to "landed" (issue 51: the third walk)', () => {
    const followed = paths.filter(({ steps }) => steps.length > 0).map(({ heading }) => heading);
    expect(followed).toEqual([
      'One crank cycle, from the poll timer to `/health`',
      "One failed sendTransaction, from the RPC answer to `/health`'s `last_error`",
      'One vote, from the plan to "landed"',
    ]);
  });

  it('numbers the steps 1 to n, lists files that exist, each once, and claims the count it lists', () => {
    for (const { heading, steps, claimed } of paths.filter((path) => path.steps.length > 0)) {
      const files = steps.map(({ file }) => file);
      expect(
        steps.map(({ number }) => number),
        `${heading}: the step numbers`,
      ).toEqual(steps.map((_, i) => i + 1));
      expect(
        files.filter((file) => !existsSync(join(ROOT, file))),
        `${heading}: files that do not exist`,
      ).toEqual([]);
      expect(claimed, `${heading}: the "**N files**" claim`).toBe(files.length);
      expect(new Set(files).size, `${heading}: a file listed twice`).toBe(files.length);
    }
  });

  it(`keeps each path within ${MAX_FOLLOWED_FILES} files (issue 35: one cycle to /health, one failed send to last_error; issue 51: one vote to landed)`, () => {
    const long = paths.filter(({ steps }) => steps.length > MAX_FOLLOWED_FILES).map(({ heading, steps }) => `${heading}: ${steps.length} files`);
    expect(long).toEqual([]);
  });

  it('takes every hop it states: each step after the first names an earlier step, and the import between them runs the way it says', () => {
    const wrong = paths.flatMap(({ heading, steps }) =>
      steps.flatMap((step) => wrongHop(step, steps, imports) ?? []).map((why) => `${heading}: ${why}`),
    );
    expect(wrong).toEqual([]);
  });
});

/** The house rule: no file of src/ over this many lines, counted as `wc -l` counts them (its newlines). */
const MAX_FILE_LINES = 400;

/** Each .ts file under `dir` (of `root`) longer than `limit` lines, named with its count. */
function longFiles(dir: string, limit: number, root = ROOT): string[] {
  return sourceFiles(dir, root).flatMap((file) => {
    const lines = readFileSync(join(root, file), 'utf8').split('\n').length - 1;
    return lines > limit ? [`${file}: ${lines} lines`] : [];
  });
}

describe(`small files: no file of src/ over ${MAX_FILE_LINES} lines (issue 51: after the formatter too)`, () => {
  it('holds for src/', () => {
    expect(longFiles('src', MAX_FILE_LINES)).toEqual([]);
  });

  it('names a file one line over, and counts lines as wc -l does', () => {
    const root = mkdtempSync(join(tmpdir(), 'file-lines-'));
    try {
      mkdirSync(join(root, 'src', 'deep'), { recursive: true });
      writeFileSync(join(root, 'src', 'deep', 'long.ts'), 'x;\n'.repeat(MAX_FILE_LINES + 1));
      writeFileSync(join(root, 'src', 'at-limit.ts'), 'x;\n'.repeat(MAX_FILE_LINES));
      writeFileSync(join(root, 'src', 'no-final-newline.ts'), `${'x;\n'.repeat(MAX_FILE_LINES)}x;`);
      expect(longFiles('src', MAX_FILE_LINES, root)).toEqual([`${join('src', 'deep', 'long.ts')}: ${MAX_FILE_LINES + 1} lines`]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
