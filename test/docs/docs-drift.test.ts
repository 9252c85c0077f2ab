import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/metrics.js';
import { statusCodeName } from '../../src/http/errors.js';
import { alertRules } from '../support/alert-rules.js';
import { metricNamesIn } from '../support/promql.js';

/**
 * Docs that cannot drift: every path a markdown file or a source comment cites exists (and every
 * quoted section of a cited document is one of its headings); every metric, label, environment
 * variable and error code a document names exists in the code; the reference tables list what the
 * code has; each runbook entry matches its alert in deploy/prometheus/alerts.yml; the README stays a
 * front door (under 200 lines) and no document cites a path outside the repository.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const tracked = (...patterns: string[]) =>
  execFileSync('git', ['ls-files', '--', ...patterns], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);

const MARKDOWN = tracked('*.md');
const SOURCES = tracked('src', 'devnet', 'test', 'property-tests', 'bench', 'scripts', 'ui').filter((path) => /\.(ts|js|mjs)$/.test(path));
/** Where names that documents mention must exist: the code, not other documents. */
const CODE = SOURCES.filter((path) => path !== 'test/docs/docs-drift.test.ts')
  .map(read)
  .join('\n');

/** Comment text of a source file: `//` comments and the lines of block comments. */
function commentsOf(source: string): string {
  return source
    .split('\n')
    .flatMap((line) => {
      const trimmed = line.trim();
      if (/^(\/\*\*?|\*)/.test(trimmed)) return [trimmed];
      const inline = /(?:^|\s)\/\/\s(.*)$/.exec(line);
      return inline?.[1] === undefined ? [] : [inline[1]];
    })
    .join('\n');
}

const CITATION_ROOTS = ['src', 'docs', 'test', 'devnet', 'bench', 'deploy', 'property-tests', 'scripts', 'ui', '.ci'];
const PATH_CITATION = new RegExp(`(?<![\\w@/.$-])((?:${CITATION_ROOTS.map((r) => r.replace('.', '\\.')).join('|')})/[\\w./-]*\\w)`, 'g');
/** Generated or placeholder paths documents may name although git does not track them. */
const UNTRACKED_OUTPUTS = /^(bench\/results|dist|dist-devnet)(\/|$)/;

interface Citation {
  from: string;
  path: string;
}

function citedPaths(): Citation[] {
  const texts = [...MARKDOWN.map((from) => ({ from, text: read(from) })), ...SOURCES.map((from) => ({ from, text: commentsOf(read(from)) }))];
  return texts.flatMap(({ from, text }) => [...text.matchAll(PATH_CITATION)].map((match) => ({ from, path: match[1]! })));
}

/** Relative links of a markdown file, resolved from its folder. */
function markdownLinks(): Citation[] {
  return MARKDOWN.flatMap((from) =>
    [...read(from).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
      .map((match) => match[1]!)
      .filter((target) => !/^[a-z]+:/.test(target))
      .map((target) => ({ from, path: normalize(join(dirname(from), target)) })),
  );
}

function headingsOf(path: string): string[] {
  return read(path)
    .split('\n')
    .filter((line) => /^#{1,6} /.test(line))
    .map((line) => line.replace(/^#+ /, '').toLowerCase());
}

/** A document's name followed by a quoted section (as the README's or a doc's): the quoted text must be one of its headings. */
function citedSections(): Array<Citation & { section: string }> {
  const texts = [...MARKDOWN.map((from) => ({ from, text: read(from) })), ...SOURCES.map((from) => ({ from, text: commentsOf(read(from)) }))];
  return texts.flatMap(({ from, text }) =>
    [...text.matchAll(/((?:docs\/[\w-]+|README|PROTOCOL|SPEC)(?:\.md)?),? (?:§\s*)?"([^"\n]{3,80})"/g)].map((match) => ({
      from,
      path: documentPath(match[1]!),
      section: match[2]!,
    })),
  );
}

function documentPath(name: string): string {
  const bare = name.replace(/\.md$/, '');
  if (bare === 'README') return 'README.md';
  if (bare === 'PROTOCOL' || bare === 'SPEC') return `docs/${bare}.md`;
  return `${bare}.md`;
}

const metrics = createMetrics(new Registry()).registry.getMetricsAsArray();
const METRIC_LABELS = new Map(metrics.map((metric) => [metric.name, new Set((metric as unknown as { labelNames: string[] }).labelNames)]));
const RULES = alertRules(read('deploy/prometheus/alerts.yml'));

function documentsAndDeploy(): Array<{ from: string; text: string }> {
  const deploy = tracked('deploy').filter((path) => /\.(ya?ml|json)$/.test(path));
  return [...MARKDOWN, ...deploy].map((from) => ({ from, text: read(from) }));
}

describe('paths cited in documents and source comments', () => {
  it('exist', () => {
    const missing = [...citedPaths(), ...markdownLinks()]
      .filter(({ path }) => !UNTRACKED_OUTPUTS.test(path) && !existsSync(join(ROOT, path)))
      .map(({ from, path }) => `${from} cites ${path}`);
    expect(missing).toEqual([]);
  });

  it('name sections that are headings of the cited document', () => {
    const wrong = citedSections()
      .filter(({ path, section }) => !existsSync(join(ROOT, path)) || !headingsOf(path).some((heading) => heading.includes(section.toLowerCase())))
      .map(({ from, path, section }) => `${from} cites ${path} "${section}"`);
    expect(wrong).toEqual([]);
  });

  it('never point outside the repository (the steering folder shared/ is not part of a clone)', () => {
    const outside = MARKDOWN.flatMap((from) =>
      [...read(from).matchAll(/(?<![\w/.-])\.{0,2}\/?shared\/[\w./-]+/g)].map((match) => `${from} cites ${match[0]}`),
    );
    expect(outside).toEqual([]);
  });

  it('find PROTOCOL and SPEC in docs/, the contracts this project implements', () => {
    expect(existsSync(join(ROOT, 'docs/PROTOCOL.md'))).toBe(true);
    expect(existsSync(join(ROOT, 'docs/SPEC.md'))).toBe(true);
  });
});

describe('names documents mention', () => {
  it('metrics exist, with the labels the documents give them', () => {
    const recorded = new Set([...read('deploy/prometheus/alerts.yml').matchAll(/record: (\S+)/g)].map((match) => match[1]!));
    const problems: string[] = [];
    for (const { from, text } of documentsAndDeploy()) {
      for (const match of text.matchAll(/\b(bridge_[a-z0-9_]+)(\{[^}\n]*\})?/g)) {
        const name = match[1]!.replace(/_(bucket|sum|count)$/, '');
        const labels = METRIC_LABELS.get(name) ?? METRIC_LABELS.get(match[1]!);
        const isPrefix = /^['*]/.test(text.slice(match.index + match[0].length)) && metrics.some((metric) => metric.name.startsWith(`${match[1]}_`));
        if (labels === undefined && !recorded.has(name) && !isPrefix) {
          problems.push(`${from}: ${match[1]} is no metric of src/metrics/metrics.ts`);
          continue;
        }
        const named = [...(match[2] ?? '').matchAll(/([a-z_]+)\s*(?:=~?|!=|,|\})/g)].map((label) => label[1]!);
        // `authority`: the target label scrape-config.yml gives every target (BridgeAuthorityMissing groups by it).
        for (const label of named.filter((l) => l !== 'le' && l !== 'job' && l !== 'instance' && l !== 'authority')) {
          if (labels !== undefined && !labels.has(label)) problems.push(`${from}: ${match[1]} has no label ${label}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('environment variables exist in the code', () => {
    const problems = MARKDOWN.flatMap((from) =>
      [...new Set([...read(from).matchAll(/\b((?:BRIDGE|SOAK|DEVNET)_[A-Z0-9_]+)\b/g)].map((match) => match[1]!))]
        .filter((name) => !CODE.includes(name))
        .map((name) => `${from}: ${name}`),
    );
    expect(problems).toEqual([]);
  });

  it('error codes exist in the code', () => {
    const declared = read('src/errors.ts') + read('devnet/devnet-error.ts');
    const problems = MARKDOWN.flatMap((from) =>
      [...new Set([...read(from).matchAll(/\b([A-Z]+__[A-Z_]+[A-Z])\b/g)].map((match) => match[1]!))]
        .filter((code) => !new RegExp(`\\b${code}\\b`).test(declared))
        .map((code) => `${from}: ${code}`),
    );
    expect(problems).toEqual([]);
  });
});

describe('the reference tables (docs/http-api.md, docs/operating.md, docs/development.md)', () => {
  const section = (path: string, heading: string) => {
    const text = read(path);
    const start = text.indexOf(`\n${heading}\n`);
    expect(start, `${path}: ${heading}`).toBeGreaterThan(-1);
    const end = text.indexOf('\n#', start + heading.length + 2);
    return text.slice(start, end === -1 ? undefined : end);
  };
  const tableRows = (text: string) =>
    text
      .split('\n')
      .filter((line) => /^\| (?!-)/.test(line))
      .slice(1);

  it('metrics: each row of docs/http-api.md gives the labels the metric has', () => {
    const problems = tableRows(section('docs/http-api.md', '## Metrics')).flatMap((row) => {
      const [, nameCell = '', , labelCell = ''] = row.split('|').map((cell) => cell.trim());
      const name = nameCell.replace(/`/g, '');
      const labels = METRIC_LABELS.get(name);
      if (labels === undefined) return [];
      const documented = [...labelCell.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]!).sort();
      return documented.join(',') === [...labels].sort().join(',')
        ? []
        : [`${name}: README says {${documented}}, the code has {${[...labels].sort()}}`];
    });
    expect(problems).toEqual([]);
  });

  it('errors: every code the HTTP layer answers is a row, and every row is a code it answers', () => {
    const httpSource = tracked('src/http').map(read).join('\n');
    const literal = new Set([...httpSource.matchAll(/error: '([a-z_]+)'/g)].map((match) => match[1]!));
    const rows = tableRows(section('docs/http-api.md', '### Errors')).map((row) => {
      const [, status = '', code = ''] = row.split('|').map((cell) => cell.trim());
      return { status: Number(status), code: code.replace(/`/g, '') };
    });
    const documented = new Set(rows.map((row) => row.code));
    expect([...literal].filter((code) => !documented.has(code))).toEqual([]);
    expect(rows.filter((row) => !literal.has(row.code) && statusCodeName(row.status) !== row.code)).toEqual([]);
    expect(rows.length, 'one row per code').toBe(documented.size);
  });

  it('runbook: one entry per alert of alerts.yml, and the labels an entry names are labels of its alert', () => {
    const entries = [...read('docs/operating.md').matchAll(/^### Alert: (\w+)\n([\s\S]*?)(?=\n#)/gm)].map((match) => ({
      name: match[1]!,
      text: match[2]!,
    }));
    expect(entries.map((entry) => entry.name).sort()).toEqual(RULES.map((rule) => rule.name).sort());
    const problems = entries.flatMap(({ name, text }) => {
      const rule = RULES.find((candidate) => candidate.name === name)!;
      const readLabels = metricNamesIn(rule.expr).flatMap((metric) => [...(METRIC_LABELS.get(metric) ?? [])]);
      const exprLabels = new Set([...rule.expr.matchAll(/\b([a-z_]+)\b/g)].map((match) => match[1]!).concat(readLabels));
      return [...text.matchAll(/`([a-z_]+)` label/g)]
        .map((match) => match[1]!)
        .filter((label) => !exprLabels.has(label))
        .map((label) => `${name}: the runbook names the label ${label}, which its alert does not carry`);
    });
    expect(problems).toEqual([]);
  });

  it('dependencies: every package of package.json is a row or named among the required ones', () => {
    const text = section('docs/development.md', '## Dependencies');
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    const required = ['fastify', 'xstate', '@solana/web3.js', 'prom-client', 'zod', 'pino', 'vitest', 'fast-check', 'typescript', '@types/node'];
    const rows = new Set(
      tableRows(text).map((row) =>
        row
          .split('|')[1]!
          .trim()
          .replace(/`/g, '')
          .replace(/ \(dev\)$/, ''),
      ),
    );
    const missing = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)].filter(
      (name) => !rows.has(name) && !required.includes(name),
    );
    expect(missing).toEqual([]);
    const unknown = [...rows].filter((name) => !(name in pkg.dependencies) && !(name in pkg.devDependencies));
    expect(unknown).toEqual([]);
  });

  it('runbook questions: no question is asked twice', () => {
    const questions = tableRows(section('docs/operating.md', '## Runbook')).map((row) => row.split('|')[1]!.trim());
    expect(questions.filter((question, i) => questions.indexOf(question) !== i)).toEqual([]);
  });
});

describe('README.md, the front door', () => {
  it('fits on a few screens: under 200 lines, details in docs/', () => {
    expect(read('README.md').split('\n').length).toBeLessThan(200);
  });

  it('links every document in docs/ and bench/README.md', () => {
    const readme = read('README.md');
    const documents = [...tracked('docs/*.md'), 'bench/README.md'];
    expect(documents.filter((path) => !readme.includes(`](${path})`))).toEqual([]);
  });
});

describe('contracts the documents restate', () => {
  const typeBody = (path: string, name: string) => {
    const source = read(path);
    const start = source.indexOf(`export ${source.includes(`export interface ${name}`) ? 'interface' : 'type'} ${name}`);
    expect(start, `${path}: ${name}`).toBeGreaterThan(-1);
    return source.slice(start, source.indexOf('\n}', start) === -1 ? undefined : source.indexOf('\n\n', start));
  };

  it("docs/crank.md names every event the machine emits (crank-types.ts's CrankEmitted)", () => {
    const emitted = [...typeBody('src/machines/crank-types.ts', 'CrankEmitted').matchAll(/type: '(\w+)'/g)].map((match) => match[1]!);
    const sentence = /The machine emits what the outside\s+world should learn \(([^)]*)\)/.exec(read('docs/crank.md'))?.[1] ?? '';
    const documented = [...sentence.matchAll(/`(\w+)`/g)].map((match) => match[1]!);
    expect(documented.sort()).toEqual(emitted.sort());
  });

  it("docs/architecture.md's createBridgeChains contract names every option (create-chain-client.ts's BridgeChainsOptions and the ChainEndpointsOptions it extends)", () => {
    const body =
      typeBody('src/chain/client/create-chain-client.ts', 'BridgeChainsOptions') +
      typeBody('src/chain/client/chain-endpoints.ts', 'ChainEndpointsOptions');
    const options = [...body.matchAll(/^ {2}(\w+)\??:/gm)].map((match) => match[1]!);
    const doc = read('docs/architecture.md');
    const contract = doc.slice(doc.indexOf('createBridgeChains(options: {'), doc.indexOf('}): BridgeChains'));
    expect(options.length).toBeGreaterThan(5);
    expect(options.filter((name) => !new RegExp(`\\b${name}\\??:`).test(contract))).toEqual([]);
  });
});
