import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Issue 49: a recipe pasted as written must not destroy a key. Every shell block of the docs that
 * deletes or overwrites a file starts `set -eu` (a failing line stops it), compares a public key
 * with REGISTERED_AUTHORITY before it deletes anything, and is run as written by a test, named in
 * the marker comment right above it (`<!-- test/... runs the next block as written -->`).
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MARKER = /<!-- (test\/\S+\.test\.ts) runs the next block as written -->\n$/;

interface ShellBlock {
  file: string;
  line: number;
  body: string;
  /** The comment right above the block. */
  before: string;
}

function shellBlocks(): ShellBlock[] {
  const files = [
    ...readdirSync(join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
    'README.md',
  ];
  return files.flatMap((file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    return [...text.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)].map((match) => ({
      file,
      line: text.slice(0, match.index).split('\n').length,
      body: match[1]!,
      before: text.slice(Math.max(0, match.index - 200), match.index),
    }));
  });
}

/** Lines of a block that delete (rm, shred, mv, truncate) or overwrite with `>`; `<placeholders>` and comments aside. */
function destructiveLines(body: string): string[] {
  return body.split('\n').filter((line) => {
    const code = line.replace(/<[^<>\n]*>/g, '').replace(/(^|\s)#.*$/, '');
    return /(^|[;&|(]\s*|\s)(rm|shred|mv|truncate)\s/.test(code) || /(^|[^\d&>])>\s*[^&\s>|]/.test(code.replace(/\d?>&\d/g, ''));
  });
}

describe('shell blocks of the docs that delete or overwrite', () => {
  const blocks = shellBlocks();
  const destructive = blocks.filter((block) => destructiveLines(block.body).length > 0);

  it('finds what deletes or overwrites, and not a placeholder or a 2>&1', () => {
    expect(destructiveLines('shred -u authority.json\nfoo > out.txt\ncat a | mv b c')).toHaveLength(3);
    expect(
      destructiveLines('aws kms create-alias --target-key-id <KeyId from the answer>\ncmd 2>&1\n# rm -rf / is a comment\nnode -e "<the script>"'),
    ).toEqual([]);
    expect(destructive.length, 'the SoftHSM recipe at least').toBeGreaterThan(0);
  });

  it('start `set -eu`, check the key against REGISTERED_AUTHORITY before deleting, and are run by a test that reads them', () => {
    for (const block of destructive) {
      const where = `${block.file}:${block.line}`;
      const lines = block.body.split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('#'));
      expect(lines[0], `${where}: the first line is not set -eu`).toMatch(/^set -eu\b/);
      const firstDelete = lines.findIndex((line) => /(^|\s)(rm|shred)\s/.test(line.replace(/\s#.*$/, '')));
      if (firstDelete !== -1) {
        const check = lines.findIndex((line) => /\[ "\$\w+" = "\$REGISTERED_AUTHORITY" \] \|\| \{.*exit 1; \}/.test(line));
        expect(check, `${where}: no comparison with REGISTERED_AUTHORITY that exits`).toBeGreaterThan(-1);
        expect(check, `${where}: the key is compared after the first deletion`).toBeLessThan(firstDelete);
      }
      const marker = MARKER.exec(block.before);
      expect(marker, `${where}: no <!-- test/... runs the next block as written --> right above it`).not.toBeNull();
      const test = marker![1]!;
      expect(existsSync(join(ROOT, test)), `${where}: ${test} does not exist`).toBe(true);
      expect(readFileSync(join(ROOT, test), 'utf8'), `${test} does not read ${block.file}`).toContain(block.file.replace(/^docs\//, ''));
    }
  });
});
