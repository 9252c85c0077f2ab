import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Every file map in the documents is true: a map lists every .ts file (and every subfolder) of
 * the folder it maps, and nothing that does not exist. One test for every map of every tracked
 * markdown file, in the two forms the documents use:
 *
 * - a fenced block (no language) where a folder path (`src/chain/client/`) is followed by its
 *   entries indented two spaces more (`name.ts` or `sub/`, each line's first word; deeper
 *   lines are the entry's description), nested as deep as the block goes; a block's top-level
 *   paths (`src/index.ts`, `src/config/`) map their own folder (`src/`);
 * - a table whose first header cell names the folder, `module (src/machines/)`, whose first
 *   column holds the entries in backticks (`crank-service.ts`, `planning/waiting.ts`).
 *
 * A subfolder counts as listed when the map names it (`rpc/`) or names files in it; a map that
 * names files of a subfolder names them all.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MARKDOWN = execFileSync('git', ['ls-files', '--', '*.md'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
const ENTRY = /^(?:[\w.-]+\/)*[\w.-]+(?:\.ts|\/)$/;

/** One document's maps: each mapped folder (`src/chain/`, with its slash) and the entries it lists, relative to it. */
type Maps = Map<string, Set<string>>;

function add(maps: Maps, folder: string, name: string): void {
  const entries = maps.get(folder) ?? new Set<string>();
  entries.add(name);
  maps.set(folder, entries);
}

/** The folder a repository path is in, with its slash (`src/` for `src/index.ts` and for `src/config/`). */
function folderOf(path: string): string {
  return `${posix.dirname(path.endsWith('/') ? path.slice(0, -1) : path)}/`;
}

function blockMaps(block: string[], maps: Maps): void {
  const stack: Array<{ indent: number; folder: string }> = [];
  const indentOf = (line: string) => line.length - line.trimStart().length;
  const firstWord = (line: string) => line.trim().split(/\s+/)[0]!;
  const edge = Math.min(...block.filter((line) => line.trim() !== '').map(indentOf));
  const topPaths = block
    .filter((line) => line.trim() !== '' && indentOf(line) === edge)
    .map(firstWord)
    .filter((word) => ENTRY.test(word) && word.includes('/'));
  // Top-level paths map their folder when one of them is a file there (`src/index.ts`): a block of folder headers alone maps each header.
  const mappedTop = new Set(topPaths.filter((path) => path.endsWith('.ts')).map(folderOf));
  for (const line of block) {
    if (line.trim() === '') continue;
    const indent = indentOf(line);
    const token = firstWord(line);
    while (stack.length > 0 && stack.at(-1)!.indent >= indent) stack.pop();
    const parent = stack.at(-1);
    // An entry sits two spaces right of its folder, or at the block's left edge as a repository path.
    const entry = ENTRY.test(token) && (parent === undefined ? indent === edge && token.includes('/') : indent === parent.indent + 2);
    if (!entry) continue;
    const path = parent === undefined ? token : `${parent.folder}${token}`;
    if (parent !== undefined) add(maps, parent.folder, token);
    else if (mappedTop.has(folderOf(path))) add(maps, folderOf(path), path.slice(folderOf(path).length));
    if (path.endsWith('/')) stack.push({ indent, folder: path });
  }
}

function tableMaps(lines: string[], maps: Maps): void {
  for (let i = 0; i < lines.length; i++) {
    const folder = /^\|\s*module \(([\w./-]+\/)\)\s*\|/.exec(lines[i]!)?.[1];
    if (folder === undefined) continue;
    for (let row = i + 2; row < lines.length && lines[row]!.startsWith('|'); row++) {
      const cell = lines[row]!.split('|')[1] ?? '';
      for (const [, name] of cell.matchAll(/`([\w./-]+)`/g)) if (ENTRY.test(name!)) add(maps, folder, name!);
    }
  }
}

function mapsOf(text: string): Maps {
  const maps: Maps = new Map();
  const lines = text.split('\n');
  // Inside a fence: the lines of a plain one (a map may be there), or null in one with a language (sh, ts: never a map).
  let block: string[] | null | undefined;
  for (const line of lines) {
    if (!line.startsWith('```')) {
      block?.push(line);
      continue;
    }
    if (block === undefined) block = line === '```' ? [] : null;
    else {
      if (block !== null) blockMaps(block, maps);
      block = undefined;
    }
  }
  tableMaps(lines, maps);
  return maps;
}

/** What a map of `folder` must list: its .ts files and its subfolders that hold any (an emptied folder a move left behind is none). */
function contents(folder: string): { files: string[]; folders: string[] } {
  const entries = readdirSync(join(ROOT, folder), { withFileTypes: true });
  return {
    files: entries.filter((entry) => entry.isFile() && entry.name.endsWith('.ts')).map((entry) => entry.name),
    folders: entries.filter((entry) => entry.isDirectory() && holdsTypeScript(join(folder, entry.name))).map((entry) => `${entry.name}/`),
  };
}

function holdsTypeScript(folder: string): boolean {
  return readdirSync(join(ROOT, folder), { withFileTypes: true }).some((entry) =>
    entry.isDirectory() ? holdsTypeScript(join(folder, entry.name)) : entry.name.endsWith('.ts'),
  );
}

/** What the map of `folder` leaves out (nested files of a subfolder it names files of count as its own). */
function missing(folder: string, listed: Set<string>, prefix = ''): string[] {
  const { files, folders } = contents(`${folder}${prefix}`);
  const left = files.filter((file) => !listed.has(`${prefix}${file}`)).map((file) => `${folder}${prefix}${file}`);
  for (const sub of folders) {
    const named = listed.has(`${prefix}${sub}`);
    const filesNamed = [...listed].some((entry) => entry.startsWith(`${prefix}${sub}`) && entry !== `${prefix}${sub}`);
    if (filesNamed) left.push(...missing(folder, listed, `${prefix}${sub}`));
    else if (!named) left.push(`${folder}${prefix}${sub}`);
  }
  return left;
}

const exists = (path: string) =>
  existsSync(join(ROOT, path)) && (path.endsWith('/') ? statSync(join(ROOT, path)).isDirectory() : statSync(join(ROOT, path)).isFile());

const DOCUMENTS = MARKDOWN.map((doc) => ({ doc, maps: mapsOf(readFileSync(join(ROOT, doc), 'utf8')) })).filter(({ maps }) => maps.size > 0);

describe('file maps: every map lists every file of its folder, and no file that does not exist', () => {
  it('finds the maps of the documents that keep one (architecture, crank, key custody, chain client)', () => {
    const mapped = DOCUMENTS.flatMap(({ doc, maps }) => [...maps.keys()].map((folder) => `${doc} ${folder}`));
    for (const expected of [
      'README.md src/',
      'docs/architecture.md src/',
      'docs/architecture.md src/chain/',
      'docs/crank.md src/machines/',
      'docs/key-custody.md src/signer/',
      'docs/architecture.md src/chain/port/',
      'docs/chain-client.md src/chain/rpc/',
    ]) {
      expect(mapped).toContain(expected);
    }
  });

  it.each(DOCUMENTS)('$doc', ({ doc, maps }) => {
    const problems: string[] = [];
    for (const [folder, listed] of maps) {
      if (!exists(folder)) {
        problems.push(`${doc} maps ${folder}, which does not exist`);
        continue;
      }
      for (const entry of listed) if (!exists(`${folder}${entry}`)) problems.push(`${doc} lists ${folder}${entry}, which does not exist`);
      for (const path of missing(folder, listed)) problems.push(`${doc}'s map of ${folder} leaves out ${path}`);
    }
    expect(problems).toEqual([]);
  });
});

describe('the map reader', () => {
  it('reads nested blocks and module tables, and tells an entry from a description', () => {
    const text = [
      '```',
      'src/a/',
      '  one.ts      the first',
      '              two.ts is named in a description, not listed',
      '  sub/        a folder',
      '    three.ts  nested',
      '```',
      '',
      '| module (src/b/) | role |',
      '|---|---|',
      '| `four.ts`, `deep/five.ts` | x |',
      '',
      '```sh',
      'echo not a map',
      '```',
      '```',
      'src/c/',
      '  six.ts',
      '```',
    ].join('\n');
    const maps = mapsOf(text);
    expect([...maps.get('src/a/')!]).toEqual(['one.ts', 'sub/']);
    expect([...maps.get('src/a/sub/')!]).toEqual(['three.ts']);
    expect([...maps.get('src/b/')!]).toEqual(['four.ts', 'deep/five.ts']);
    expect([...maps.get('src/c/')!]).toEqual(['six.ts']);
  });
});
