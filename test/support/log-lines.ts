import { appendFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Every log line a server of the suite writes passes through here: the in-process ones through
 * captureLogs (log-capture.ts, the one logger the tests give an app, a crank or a chain client),
 * the built server through ServerProcess (server-process.ts). A JSON line with a key twice in one
 * object is kept, and log-lines-setup.ts fails the test that wrote it: Elasticsearch and
 * OpenSearch refuse such a document, JSON.parse silently keeps the last value. So is a key whose
 * type differs from the one an earlier line gave it (typeProblemsIn). (A line that is not JSON at
 * all is ServerProcess's `notJson` record, which the process tests refuse.)
 */

const problems: string[] = [];

/**
 * The JSON type of every key path written so far in this worker (`err`, `report.cleanup_attempted`,
 * `indices[]`), with the line that first wrote it: a pipeline's index maps a field by the first
 * line it sees and refuses every later line whose field has another type. The suite's workers
 * reuse their module graph from file to file (vitest.config.ts, isolate: false), so this spans
 * every file a worker runs. `null` fits any mapping and is not a type here.
 */
const typesSeen = new Map<string, { type: string; line: string }>();

/**
 * Set by scripts/run-tests.mjs: each worker appends the first type it saw of each key path here
 * (one JSON line each), and the script compares the workers' types once the suite ends. Without
 * it a key typed one way in one worker and another way in another passed or failed by which
 * files happened to share a worker.
 */
const TYPES_FILE = process.env['BRIDGE_LOG_TYPES_DIR'] === undefined ? undefined : join(process.env['BRIDGE_LOG_TYPES_DIR'], `${process.pid}.jsonl`);

/** Keys with one fixed type on every line: `err` is an object (src/log/logger.ts serializeError). */
const FIXED_TYPES: Record<string, string> = { err: 'object' };

/** Checks one written line (its trailing newline optional); a problem is kept for the running test. */
export function checkLogLine(line: string, writer: string): void {
  const duplicate = duplicateKeyIn(line);
  if (duplicate !== null) problems.push(`${writer} wrote the key "${duplicate}" twice in one object: ${line.slice(0, 300)}`);
  for (const problem of typeProblemsIn(line)) problems.push(`${writer}: ${problem}`);
}

/** Each key path of `line` whose type differs from the one an earlier line (or FIXED_TYPES) gave it. */
export function typeProblemsIn(line: string): string[] {
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    return [];
  }
  const found: string[] = [];
  for (const [path, type] of keyTypes(record, '')) {
    const fixed = FIXED_TYPES[path];
    if (fixed !== undefined && fixed !== type) {
      found.push(`the key "${path}" is always of type ${fixed}, this line has ${type}: ${line.slice(0, 300)}`);
      continue;
    }
    const seen = typesSeen.get(path);
    if (seen === undefined) {
      typesSeen.set(path, { type, line: line.slice(0, 300) });
      if (TYPES_FILE !== undefined) appendFileSync(TYPES_FILE, `${JSON.stringify({ path, type, line: line.slice(0, 300) })}\n`);
    } else if (seen.type !== type)
      found.push(`the key "${path}" is of type ${type} here, ${seen.type} in an earlier line (${seen.line}): ${line.slice(0, 300)}`);
  }
  return found;
}

const MAX_PATH_DEPTH = 6;

/** Every key path of a parsed line with its JSON type (arrays: `path[]` for their items). */
function keyTypes(value: unknown, path: string, depth = 0): Array<[string, string]> {
  if (depth > MAX_PATH_DEPTH || value === null || typeof value !== 'object') return [];
  const pairs: Array<[string, string]> = [];
  const entries: Array<[string, unknown]> = Array.isArray(value)
    ? value.map((item) => [`${path}[]`, item])
    : Object.entries(value).map(([key, item]) => [path === '' ? key : `${path}.${key}`, item]);
  for (const [childPath, item] of entries) {
    if (item === null) continue;
    pairs.push([childPath, Array.isArray(item) ? 'array' : typeof item]);
    pairs.push(...keyTypes(item, childPath, depth + 1));
  }
  return pairs;
}

/** The problems kept since the last call, which forgets them. */
export function takeLogLineProblems(): string[] {
  return problems.splice(0);
}

/** The first key that occurs twice in one object of `json`, or null (also when it is not JSON). */
export function duplicateKeyIn(json: string): string | null {
  try {
    JSON.parse(json);
  } catch {
    return null;
  }
  const scopes: Array<Set<string> | null> = [];
  let expectKey = false;
  for (let i = 0; i < json.length; i++) {
    const char = json[i];
    if (char === '"') {
      const end = stringEnd(json, i);
      const scope = scopes.at(-1);
      if (expectKey && scope) {
        const key = JSON.parse(json.slice(i, end + 1)) as string;
        if (scope.has(key)) return key;
        scope.add(key);
      }
      expectKey = false;
      i = end;
    } else if (char === '{') {
      scopes.push(new Set());
      expectKey = true;
    } else if (char === '[') {
      scopes.push(null);
    } else if (char === '}' || char === ']') {
      scopes.pop();
    } else if (char === ',') {
      expectKey = scopes.at(-1) instanceof Set;
    }
  }
  return null;
}

/** The index of the quote closing the string that opens at `start`. */
function stringEnd(json: string, start: number): number {
  for (let i = start + 1; i < json.length; i++) {
    if (json[i] === '\\') i++;
    else if (json[i] === '"') return i;
  }
  return json.length;
}
