import { realpathSync, statSync, type Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * Whether another account could change a file the authority's key depends on (the keypair file,
 * a PKCS#11 `pin-source` or `module-path`, a Vault token file), as ssh's StrictModes decides it:
 * the file must not be writable by others nor owned by another user than this process's or
 * root, and no directory above it (as named and as its links resolve) may be writable by
 * others, unless it is sticky (/tmp: others may add files there, not replace ours). Each
 * problem is one sentence naming the path and why; the caller adds what the file is.
 */

const WRITABLE_BY_OTHERS = 0o002;
const STICKY = 0o1000;

/** Undefined when the file can be trusted; the stat failures are the caller's to report. */
export function untrustedPathProblem(path: string): string | undefined {
  const file = statSync(path);
  const fileProblem = ownProblem(file);
  if (fileProblem !== undefined) return fileProblem;
  for (const dir of directoriesAbove(path)) {
    const stats = statSync(dir);
    if ((stats.mode & WRITABLE_BY_OTHERS) !== 0 && (stats.mode & STICKY) === 0) {
      return `is in directory ${JSON.stringify(dir)}, which others can write to (mode ${mode(stats)}) and so replace the file; chmod o-w it or move the file`;
    }
  }
  return undefined;
}

function ownProblem(stats: Stats): string | undefined {
  if ((stats.mode & WRITABLE_BY_OTHERS) !== 0) return `is writable by others (mode ${mode(stats)}); restrict it with chmod 600`;
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid && stats.uid !== 0) {
    return `is owned by uid ${stats.uid}, neither this process's (${uid}) nor root; that account could change it (chown it)`;
  }
  return undefined;
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
