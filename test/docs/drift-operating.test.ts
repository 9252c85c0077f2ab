import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { chainBounds } from '../../src/chain/client/chain-bounds.js';
import { readCallBudgetMs } from '../../src/chain/rpc/read-retry.js';
import { CONFIG_VARIABLES, DEFAULTS } from '../../src/config/config.js';
import { RUNTIME_VARIABLES } from '../../src/config/variable-sets.js';
import { LEASE_STATUSES } from '../../src/machines/lease.js';
import { worstCaseActionMs, worstCaseCycleMs } from '../../src/machines/delays.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { EXIT } from '../../src/ops/cli.js';
import { PHASES } from '../../src/transfers/transfer-view.js';
import { startTestApp } from '../support/http-app.js';
import { ensureBuilt } from '../support/server-process.js';

/**
 * The lists, tables and figures of docs/operating.md, docs/http-api.md, docs/crank.md and
 * docs/configuration.md that docs-drift.test.ts does not hold, checked against the code: every
 * configuration variable is a row with the code's default; every `NAME` = value a document states
 * is the constant's value; each metric row's type; the ops commands and exit codes; the phases; the
 * lease statuses; the default worst-case figures.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const DOCS = ['docs/operating.md', 'docs/http-api.md', 'docs/crank.md', 'docs/configuration.md'];

/** The body rows of every table of a text, as trimmed cells. */
function tableRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => /^\| /.test(line) && !/^\|\s*-/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
}

const backticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);

describe('docs/configuration.md', () => {
  const rows = tableRows(read('docs/configuration.md')).filter((cells) => cells[0]!.startsWith('`BRIDGE_') || cells[0] === '`PORT`');
  const documented = new Map(rows.flatMap((cells) => backticked(cells[0]!).map((name) => [name, cells[1]!] as const)));
  const defaults = DEFAULTS as Record<string, string>;

  it('has one row for every variable the server reads, and no row for one it does not', () => {
    expect(CONFIG_VARIABLES.filter((name) => !documented.has(name))).toEqual([]);
    expect([...documented.keys()].filter((name) => !(CONFIG_VARIABLES as string[]).includes(name) && name !== 'BRIDGE_FLOW_LIMIT_<MINT>')).toEqual(
      [],
    );
  });

  it("gives each row the code's default: the value in backticks, `required` for the runtime five, none where the code has none", () => {
    const wrong = [...documented].flatMap(([name, cell]) => {
      if ((RUNTIME_VARIABLES as readonly string[]).includes(name)) return cell === 'required' ? [] : [`${name}: ${cell}, not required`];
      if (name in defaults) return cell === `\`${defaults[name]}\`` ? [] : [`${name}: the document says ${cell}, the code ${defaults[name]}`];
      // No default in DEFAULTS: `none`, or what the code derives (a formula, another variable), never a plain value.
      return cell === 'none' || /[$(]/.test(cell) || !/^`[^`]*`$/.test(cell) ? [] : [`${name}: the document says ${cell}, the code has no default`];
    });
    expect(wrong).toEqual([]);
  });
});

/** Every `NAME` = value a document states: the name, the number in the constant's unit, where. */
function statedConstants(): Array<{ doc: string; name: string; value: number }> {
  return DOCS.flatMap((doc) =>
    [...read(doc).matchAll(/(?<![×/+−-] )`([A-Z][A-Z0-9_]+)` = ([\d,.]+)(?: (ms|s|KiB|MiB)\b)?/g)].map((match) => {
      const [, name = '', digits = '', unit] = match;
      const number = Number(digits.replace(/,/g, ''));
      const scale = unit === 's' && name.endsWith('_MS') ? 1000 : unit === 'KiB' ? 1024 : unit === 'MiB' ? 1024 ** 2 : 1;
      return { doc, name, value: number * scale };
    }),
  );
}

/** The value of a constant declared `const NAME = <arithmetic of literals and constants>` somewhere in src/. */
function constantValue(name: string, sources: string): number | undefined {
  // An exported constant first: a module may keep a private one of the same name (rpc-fetch.ts's MAX_QUOTED_HEADER_CHARS).
  const declaration = (prefix: string) => new RegExp(`(?:^|\\n)${prefix}const ${name} = ([^;\\n]+);`).exec(sources)?.[1];
  const declared = declaration('export ') ?? declaration('');
  if (declared === undefined) return undefined;
  const expression = declared.replace(/\b[A-Z][A-Z0-9_]+\b/g, (inner) => String(constantValue(inner, sources) ?? Number.NaN)).replace(/_/g, '');
  if (!/^[\d\s*+()./-]+$|Math\.ceil/.test(expression)) return undefined;
  return Function(`return (${expression});`)() as number;
}

describe('constants the documents state', () => {
  const sources = execFileSync('git', ['ls-files', 'src'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((path) => path.endsWith('.ts'))
    .map(read)
    .join('\n');

  it('finds them (the HTTP limits at least)', () => {
    expect(statedConstants().filter(({ doc }) => doc === 'docs/http-api.md').length).toBeGreaterThan(15);
  });

  it('are the values the code declares', () => {
    const wrong = statedConstants().flatMap(({ doc, name, value }) => {
      const actual = constantValue(name, sources);
      return actual === value ? [] : [`${doc}: ${name} = ${value}, the code says ${actual}`];
    });
    expect(wrong).toEqual([]);
  });
});

describe('code names the documents use', () => {
  it('every `camelCase` name of a function, guard, action or field is one src/ or package.json has', () => {
    const code = `${execFileSync('git', ['grep', '-h', '-o', '-w', '-E', '[a-z][a-zA-Z0-9]*[A-Z][a-zA-Z0-9]*', '--', 'src', 'package.json'], { cwd: ROOT, encoding: 'utf8' })}`;
    const known = new Set(code.split('\n'));
    const unknown = [...DOCS, 'docs/failure-policy.md'].flatMap((doc) =>
      [...new Set([...read(doc).matchAll(/`([a-z][a-zA-Z0-9]*[A-Z][a-zA-Z0-9]*)(?:\(\))?`/g)].map((match) => match[1]!))]
        .filter((name) => !known.has(name))
        .map((name) => `${doc}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });
});

describe('docs/http-api.md "Endpoints"', () => {
  it('names every route the server answers, and heads a section only with one', async () => {
    // The routes as the server lists them in a 404's message (`routes: GET /health, ...`).
    const app = await startTestApp();
    const answer = await fetch(`${app.url}/no-such-route`).then((response) => response.json() as Promise<{ message: string }>);
    await app.close();
    const routes = answer.message.slice(answer.message.indexOf('routes: ') + 'routes: '.length).split(', ');
    expect(routes.length).toBeGreaterThan(5);
    const text = read('docs/http-api.md');
    expect(routes.filter((route) => !new RegExp(`\`${route.replace(/[/?]/g, '\\$&')}[\`?]`).test(text))).toEqual([]);
    const headed = [...text.matchAll(/^### `([A-Z]+ \/[^`?]*)/gm)].map((match) => match[1]!);
    expect(headed.filter((route) => !routes.includes(route))).toEqual([]);
  });
});

describe('docs/http-api.md "Metrics"', () => {
  it('gives each metric the type prom-client declares it with', () => {
    const types = new Map(
      createMetrics(new Registry())
        .registry.getMetricsAsArray()
        .map((metric) => [metric.name, (metric as unknown as { type: string }).type]),
    );
    const text = read('docs/http-api.md');
    const section = text.slice(text.indexOf('\n## Metrics\n'), text.indexOf('\n## Logs\n'));
    const rows = tableRows(section).filter((cells) => cells[0]!.startsWith('`bridge_'));
    expect(rows.length).toBe([...types.keys()].filter((name) => name.startsWith('bridge_')).length);
    expect(rows.filter(([name = '', type = '']) => types.get(name.replace(/`/g, '')) !== type).map(([name, type]) => `${name}: ${type}`)).toEqual([]);
  });

  it('names every status of the signing lease', () => {
    const row = tableRows(read('docs/http-api.md')).find((cells) => cells[0] === '`bridge_crank_lease`')!;
    expect(backticked(row[3]!).sort()).toEqual([...LEASE_STATUSES].sort());
  });
});

describe('docs/operating.md "Operating"', () => {
  const text = read('docs/operating.md');
  const section = text.slice(text.indexOf('\n## Operating\n'), text.indexOf('\n### Phases\n'));

  beforeAll(() => ensureBuilt(), 120_000);

  /** The leaf commands of the ops CLI, from its own help (`nonce init`, not `nonce`). */
  function commands(prefix: string[] = []): string[] {
    const help = execFileSync('node', ['dist/ops/cli.js', ...prefix, '--help'], { cwd: ROOT, encoding: 'utf8' });
    const names = [...help.slice(help.indexOf('Commands:')).matchAll(/^ {2}(\w+)(.*?)(?: {2,}|$)/gm)].map((match) => ({
      name: match[1]!,
      leaf: /\[options\]|</.test(match[2]!),
    }));
    return names
      .filter(({ name }) => name !== 'help')
      .flatMap(({ name, leaf }) => (leaf || prefix.length > 0 ? [[...prefix, name].join(' ')] : commands([...prefix, name])));
  }

  it('has one row per command of the ops CLI', () => {
    const documented = tableRows(section).flatMap((cells) =>
      backticked(cells[0]!)
        .map((cell) => /^ops ([a-z ]+?)(?: [<[-]|$)/.exec(cell)?.[1])
        .filter((name) => name !== undefined),
    );
    expect(documented.sort()).toEqual(commands().sort());
  });

  it('lists the exit codes the CLI has', () => {
    const stated = /Exit codes: ([^\n]*(?:\n[^\n]+)*)/.exec(section)?.[1] ?? '';
    expect([...stated.matchAll(/`(\d)`/g)].map((match) => Number(match[1])).sort()).toEqual(Object.values(EXIT).sort());
  });

  it('"Phases" has one row per phase, in order', () => {
    const phases = text.slice(text.indexOf('\n### Phases\n'), text.indexOf('\n## How each failure pages'));
    expect(
      tableRows(phases)
        .slice(1)
        .map((cells) => cells[0]!.replace(/`/g, '')),
    ).toEqual([...PHASES]);
  });
});

describe('the default worst-case figures of docs/crank.md and docs/http-api.md', () => {
  const defaults = { maxAttempts: 3, retryBackoffMs: 1000 };
  const bounds = chainBounds({ rpcTimeoutMs: 10_000 });

  it('are what delays.ts computes with the defaults and the 120 s confirm cap', () => {
    expect(Number(DEFAULTS.BRIDGE_CRANK_MAX_ATTEMPTS)).toBe(defaults.maxAttempts);
    expect(Number(DEFAULTS.BRIDGE_CRANK_RETRY_BACKOFF_MS)).toBe(defaults.retryBackoffMs);
    expect(Number(DEFAULTS.BRIDGE_RPC_TIMEOUT_MS)).toBe(10_000);
    const seconds = (ms: number) => String(Math.round(ms) / 1000);
    const crank = /read (\S+) s, life (\S+) s, action\s+(\S+) s, cycle (\S+) s/.exec(read('docs/crank.md'));
    expect(crank?.slice(1)).toEqual([
      seconds(readCallBudgetMs(10_000)),
      seconds(bounds.transactionLifeMs),
      seconds(worstCaseActionMs(defaults, bounds)),
      seconds(worstCaseCycleMs(defaults, bounds)),
    ]);
    const http = /read (\S+) s, life (\S+) s, cycle (\d+) s/.exec(read('docs/http-api.md'));
    expect(http?.slice(1)).toEqual([
      seconds(readCallBudgetMs(10_000)),
      seconds(bounds.transactionLifeMs),
      String(Math.floor(worstCaseCycleMs(defaults, bounds) / 1000)),
    ]);
  });
});
