/**
 * Every log line a server of the suite writes passes through here: the in-process ones through
 * captureLogs (log-capture.ts, the one logger the tests give an app, a crank or a chain client),
 * the built server through ServerProcess (server-process.ts). A JSON line with a key twice in one
 * object is kept, and log-lines-setup.ts fails the test that wrote it: Elasticsearch and
 * OpenSearch refuse such a document, JSON.parse silently keeps the last value. (A line that is
 * not JSON at all is ServerProcess's `notJson` record, which the process tests refuse.)
 */

const problems: string[] = [];

/** Checks one written line (its trailing newline optional); a problem is kept for the running test. */
export function checkLogLine(line: string, writer: string): void {
  const duplicate = duplicateKeyIn(line);
  if (duplicate !== null) problems.push(`${writer} wrote the key "${duplicate}" twice in one object: ${line.slice(0, 300)}`);
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
