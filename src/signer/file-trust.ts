import { realpathSync, statSync, type Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * Whether another account could change a file the authority's key depends on (the keypair file,
 * a PKCS#11 `pin-source` or `module-path`, a Vault token file or CA certificate), as ssh's
 * StrictModes decides it: neither the file nor any directory above it (as named and as its
 * links resolve) may be writable by its group or by others, nor owned by another user than this
 * process's or root. A sticky directory (/tmp) may be writable by others: they can add files
 * there, not replace ours. Each problem is one sentence naming the path, why, and the command
 * that fixes it; the caller adds what the file is.
 */

const WRITABLE_BY_GROUP = 0o020;
const WRITABLE_BY_OTHERS = 0o002;
const STICKY = 0o1000;

/** Undefined when the file can be trusted; the stat failures are the caller's to report. */
export function untrustedPathProblem(path: string): string | undefined {
  const file = statSync(path);
  const writers = writersOf(file);
  if (writers !== undefined) return `is writable by ${writers} (mode ${mode(file)}); restrict it with chmod 600`;
  const owner = foreignOwner(file);
  if (owner !== undefined) return `is owned by ${owner}; that account could change it (chown it)`;
  for (const dir of directoriesAbove(path)) {
    const problem = directoryProblem(dir);
    if (problem !== undefined) return `is in directory ${JSON.stringify(dir)}, ${problem}`;
  }
  return undefined;
}

function directoryProblem(dir: string): string | undefined {
  const stats = statSync(dir);
  const writers = (stats.mode & STICKY) === 0 ? writersOf(stats) : undefined;
  if (writers !== undefined) return `which ${writers} can write to (mode ${mode(stats)}) and so replace the file; chmod go-w it or move the file`;
  const owner = foreignOwner(stats);
  if (owner !== undefined) return `owned by ${owner}; that account could replace the file (chown it or move the file)`;
  return undefined;
}

function writersOf(stats: Stats): string | undefined {
  const group = (stats.mode & WRITABLE_BY_GROUP) !== 0;
  const others = (stats.mode & WRITABLE_BY_OTHERS) !== 0;
  if (group && others) return 'its group and others';
  if (group) return 'its group';
  return others ? 'others' : undefined;
}

/** The owner when it is neither this process's user nor root. */
function foreignOwner(stats: Stats): string | undefined {
  const uid = process.getuid?.();
  if (uid === undefined || stats.uid === uid || stats.uid === 0) return undefined;
  return `uid ${stats.uid}, neither this process's (${uid}) nor root`;
}

/** Every directory from the file's up to /, both along the path as named and along its real path. */
function directoriesAbove(path: string): string[] {
  const seen = new Set<string>();
  for (const start of [resolve(path), realpathSync(path)]) {
    for (let dir = dirname(start); !seen.has(dir); dir = dirname(dir)) seen.add(dir);
  }
  return [...seen];
}

function mode(stats: Stats): string {
  return (stats.mode & 0o7777).toString(8).padStart(4, '0');
}
