import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEMO_USAGE, DEVNET_USAGE, parseDemoFlags, parseDevnetFlags } from '../../devnet/cli-args.js';
import { parseFaultSettings } from '../../devnet/faults/settings.js';
import { adminMethods } from '../../devnet/rpc/methods/admin.js';
import { BRIDGE_RPC_METHODS } from '../../devnet/rpc/server.js';
import vitestConfig from '../../vitest.config.js';

/**
 * The lists docs/devnet.md, docs/testing.md and bench/README.md keep, checked against the code
 * they describe, both ways: the devnet's and the demo's flags (their --help text and their
 * parsers), the devnet's JSON-RPC methods and fault settings, the benches `npm run bench --
 * --list` knows, the suite's LONG and TIMED schedules in vitest.config.ts, the integration
 * files' opening comments that docs/testing.md points to instead of listing them, and every
 * constant docs/chain-client.md gives with its value (`READ_ATTEMPTS` = 3).
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The text of a markdown section: from its heading line to the next heading of any level. */
function section(path: string, heading: string): string {
  const text = read(path);
  const start = text.indexOf(`\n${heading}\n`);
  expect(start, `${path} has no heading "${heading}"`).toBeGreaterThan(-1);
  const end = text.indexOf('\n#', start + heading.length + 2);
  return text.slice(start, end === -1 ? undefined : end);
}

/** The first cells of a section's table rows (the header row left out). */
function firstCells(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => /^\| (?!-)/.test(line))
    .slice(1)
    .map((row) => row.split('|')[1]!.trim());
}

/** Every backticked name at the start of a code span of a cell: `--flag N` gives --flag, `http429: N` gives http429. */
function backticked(cells: string[], name: RegExp): string[] {
  return cells.flatMap((cell) =>
    [...cell.matchAll(/`([^`]+)`/g)].map((match) => name.exec(match[1]!)?.[1]).filter((found): found is string => found !== undefined),
  );
}

const sorted = (values: Iterable<string>) => [...new Set(values)].sort();

/** The tracked .ts files under a folder. */
const tracked = (folder: string) =>
  execFileSync('git', ['ls-files', '--', `${folder}/*.ts`], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);

/** The long flags a --help text lists (each option line starts with two spaces and its flag), help aside. */
function usageFlags(usage: string): string[] {
  return [...usage.matchAll(/^ {2}(?:-\w, )?(--[a-z-]+)/gm)].map((match) => match[1]!).filter((flag) => flag !== '--help');
}

/** The option names a parser function of devnet/cli-args.ts declares to node:util's parseArgs (its LAG_FLAGS spread resolved). */
function parserFlags(fn: string): string[] {
  const source = read('devnet/cli-args.ts');
  const body = source.slice(
    source.indexOf(`export function ${fn}(`),
    source.indexOf('if (values.help === true)', source.indexOf(`export function ${fn}(`)),
  );
  const lagFlags = /const LAG_FLAGS = \{([^\n]*)\}/.exec(source)?.[1] ?? '';
  const names = (text: string) => [...text.matchAll(/'?([a-z][a-z-]*)'?: \{ type:/g)].map((match) => `--${match[1]}`);
  return [...names(body), ...(body.includes('...LAG_FLAGS') ? names(lagFlags) : [])].filter((flag) => flag !== '--help');
}

describe('docs/devnet.md: the flags of npm run devnet and npm run demo', () => {
  const cases = [
    {
      command: 'npm run devnet',
      heading: '### `npm run devnet -- [options]`',
      usage: DEVNET_USAGE,
      parser: 'parseDevnetFlags',
      parse: (argv: string[]) => parseDevnetFlags(argv, 10_000),
    },
    {
      command: 'npm run demo',
      heading: '### `npm run demo -- [options]`',
      usage: DEMO_USAGE,
      parser: 'parseDemoFlags',
      parse: (argv: string[]) => parseDemoFlags(argv),
    },
  ];

  it.each(cases)(
    '$command: the table lists exactly the flags of its --help, which are exactly the flags its parser takes',
    ({ heading, usage, parser, parse }) => {
      const documented = sorted(backticked(firstCells(section('docs/devnet.md', heading)), /^(--[a-z-]+)/));
      expect(documented.length).toBeGreaterThan(5);
      expect(documented).toEqual(sorted(usageFlags(usage)));
      expect(sorted(parserFlags(parser))).toEqual(documented);
      // The parser itself, not only its source text: a flag it does not know is "Unknown option".
      for (const flag of documented) {
        let message = '';
        try {
          parse([flag]);
        } catch (err) {
          message = (err as Error).message;
        }
        expect(message, flag).not.toMatch(/Unknown option/);
      }
    },
  );
});

describe('docs/devnet.md: the defaults of those flags', () => {
  /** A flag's value when it is not given: the parser's result for no flags at all. */
  function defaultOf(flags: Record<string, unknown>, flag: string): unknown {
    const lags = flags['commitmentLags'] as { confirmedLagSlots: number; finalizedLagSlots: number };
    if (flag === '--confirmed-lag') return lags.confirmedLagSlots;
    if (flag === '--finalized-lag') return lags.finalizedLagSlots;
    const key = flag.slice(2).replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
    return flags[key];
  }

  it.each([
    { heading: '### `npm run devnet -- [options]`', defaults: parseDevnetFlags([], 10_000) },
    { heading: '### `npm run demo -- [options]`', defaults: parseDemoFlags([]) },
  ])("$heading: every number or path the default column gives is the parser's default", ({ heading, defaults }) => {
    const rows = section('docs/devnet.md', heading)
      .split('\n')
      .filter((line) => /^\| `--/.test(line))
      .map((row) => row.split('|').map((cell) => cell.trim()));
    let checked = 0;
    const wrong = rows.flatMap(([, flagCell = '', defaultCell = '']) => {
      const flag = /`(--[a-z-]+)/.exec(flagCell)![1]!;
      const number = /^(\d+)\b/.exec(defaultCell)?.[1];
      const path = /^`(\.[\w./-]+)`/.exec(defaultCell)?.[1];
      const documented = number !== undefined ? Number(number) : path;
      if (documented === undefined) return [];
      checked++;
      const actual = defaultOf(defaults as unknown as Record<string, unknown>, flag);
      return actual === documented ? [] : [`${flag}: the table says ${documented}, the parser ${String(actual)}`];
    });
    expect(checked).toBeGreaterThan(5);
    expect(wrong).toEqual([]);
  });
});

describe('docs/devnet.md: the JSON-RPC methods and fault settings', () => {
  it('the method table lists exactly the methods a node serves, the devnet_* admin methods included', () => {
    const documented = backticked(firstCells(section('docs/devnet.md', '### JSON-RPC methods')), /^(\w+)$/);
    expect(sorted(documented)).toEqual(sorted([...Object.keys(BRIDGE_RPC_METHODS), ...Object.keys(adminMethods)]));
  });

  it('the fault tables list exactly the settings the node accepts', () => {
    const faults = section('docs/devnet.md', '## Faults');
    const documented = sorted(backticked(firstCells(faults), /^(\w+)/));
    // Each per-endpoint setting is accepted at the top level, each per-method one under `methods`; an unknown key is refused.
    const known = new Set(Object.keys(BRIDGE_RPC_METHODS));
    const accepted = (settings: unknown) => {
      try {
        parseFaultSettings(settings, known);
        return true;
      } catch {
        return false;
      }
    };
    expect(accepted({ notASetting: 1 })).toBe(false);
    const notAccepted = documented.filter((key) => !accepted({ [key]: undefined }) && !accepted({ methods: { '*': { [key]: undefined } } }));
    expect(notAccepted).toEqual([]);
    // And the other way: every key of the two schemas (`methods` is the per-method table itself).
    const source = read('devnet/faults/settings.ts');
    const schemaKeys = (name: string) => {
      const start = source.indexOf(`const ${name} = z.strictObject({`);
      expect(start, name).toBeGreaterThan(-1);
      return [...source.slice(start, source.indexOf('\n});', start)).matchAll(/^ {2}(\w+): /gm)].map((match) => match[1]!);
    };
    const declared = sorted([...schemaKeys('faultSettingsSchema'), ...schemaKeys('methodFaultsSchema')].filter((key) => key !== 'methods'));
    expect(declared.length).toBeGreaterThan(20);
    expect(documented).toEqual(declared);
  });
});

describe('bench/README.md: the benches', () => {
  it('lists exactly the benches npm run bench -- --list knows', () => {
    const listing = execFileSync(join(ROOT, 'node_modules/.bin/tsx'), ['bench/run.ts', '--list'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    const known = /^benches: (.*)$/m.exec(listing)?.[1]?.split(', ') ?? [];
    expect(known.length).toBeGreaterThan(5);
    const documented = backticked(firstCells(section('bench/README.md', '## The benches')), /^([a-z-]+)$/);
    expect(documented).toEqual(known);
  }, 60_000);
});

describe("docs/testing.md: the suite's schedule and the integration files", () => {
  const projects = (vitestConfig.test?.projects ?? []) as Array<{ test: { name: string; include: string[] } }>;
  const include = (name: string) => projects.find((project) => project.test.name === name)?.test.include ?? [];

  const listed = (heading: string) =>
    [...section('docs/testing.md', heading).matchAll(/`((?:test|property-tests)\/\S+\.test\.ts)`/g)].map((match) => match[1]!);

  it('the timed files are the files of TIMED', () => {
    expect(include('timed').length).toBeGreaterThan(5);
    expect(sorted(listed('### The timed files (`TIMED`)'))).toEqual(sorted(include('timed')));
  });

  it('the long files are the files of LONG', () => {
    expect(include('long').length).toBeGreaterThan(0);
    expect(sorted(listed('### The long files (`LONG`)'))).toEqual(sorted(include('long')));
  });

  it('every integration file opens with a comment saying what it proves', () => {
    const files = readdirSync(join(ROOT, 'test/integration')).filter((name) => name.endsWith('.test.ts'));
    const silent = files.filter((name) => {
      const source = read(`test/integration/${name}`);
      const comment = source.indexOf('/**');
      const firstTest = source.search(/^(describe|it|test)(\.\w+)*\(/m);
      return comment === -1 || (firstTest !== -1 && firstTest < comment);
    });
    expect(files.length).toBeGreaterThan(20);
    expect(silent).toEqual([]);
  });
});

describe('docs/chain-client.md: the constants it gives with their values', () => {
  const UNITS: Record<string, number> = { ms: 1, s: 1_000, KiB: 1_024 };
  const source = tracked('src').map(read).join('\n');

  /** The value of `const NAME = <arithmetic>;` in src/ (other such constants and Math.ceil/floor/min/max allowed), or why there is none. */
  function codeValue(name: string): number | string {
    const definitions = [...source.matchAll(new RegExp(`\\bconst ${name}(?::[^=]+)? = ([^;\\n]+);`, 'g'))].map((match) => match[1]!.trim());
    if (definitions.length !== 1) return `${definitions.length} definitions in src/`;
    let expression = definitions[0]!;
    for (const constant of new Set(expression.match(/\b[A-Z][A-Z0-9_]+\b/g) ?? [])) {
      const value = codeValue(constant);
      if (typeof value === 'string') return `${constant}: ${value}`;
      expression = expression.replace(new RegExp(`\\b${constant}\\b`, 'g'), String(value));
    }
    expression = expression.replace(/(\d)_(?=\d)/g, '$1');
    if (!/^(?:[\d\s*+\-/().,]|Math\.(?:ceil|floor|min|max))+$/.test(expression)) return `not arithmetic: ${definitions[0]}`;
    return Number(new Function(`return (${expression});`)());
  }

  it('each is defined once in src/ with the value the document gives', () => {
    const claims = [...read('docs/chain-client.md').matchAll(/`([A-Z][A-Z0-9_]+)` = (\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?:\s(ms|s|KiB)\b)?/g)].map(
      (match) => ({
        name: match[1]!,
        value: Number(match[2]!.replaceAll(',', '')) * (UNITS[match[3] ?? ''] ?? 1),
      }),
    );
    expect(claims.length).toBeGreaterThan(25);
    const wrong = claims.flatMap(({ name, value }) => {
      const actual = codeValue(name);
      return actual === value ? [] : [`${name}: the document says ${value}, the code ${actual}`];
    });
    expect(wrong).toEqual([]);
  });
});
