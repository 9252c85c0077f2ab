import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TestRunner, describe, expect, it } from 'vitest';
import { replayCommand, testNamePattern, vitestFullName } from './profile.js';

/**
 * The replay command a failing property prints must run that test, and only it, when pasted
 * into a shell as printed: its file, and a `-t` pattern matching its full name alone.
 */

const run = promisify(execFile);
const FIXTURE = 'property-tests/support/replay-fixture.test.ts';
/** One child vitest over one small file, on a loaded 2-core machine: a few seconds. */
const CHILD_TIMEOUT_MS = 25_000;

interface JsonTest {
  fullName: string;
  status: string;
  failureMessages: string[];
}

/** The environment of a shell the user pastes into: none of this run's vitest or replay variables. */
function pasteEnvironment(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(VITEST|TEST$|NODE_ENV$|BRIDGE_PROPERTY_)/.test(key)));
  return { ...env, BRIDGE_REPLAY_FIXTURE: '1' };
}

/** Runs a shell command line with vitest's JSON reporter appended; the tests it reports. */
async function vitestInShell(commandLine: string): Promise<JsonTest[]> {
  const dir = await mkdtemp(join(tmpdir(), 'bridge-replay-'));
  try {
    const report = join(dir, 'report.json');
    await run('sh', ['-c', `${commandLine} --reporter=json --outputFile.json=${report}`], {
      env: pasteEnvironment(),
      timeout: CHILD_TIMEOUT_MS,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { code?: unknown }) => {
      // Vitest exits 1 when a test fails, which the fixture's tests do; anything else is not a run.
      if (error.code !== 1) throw error;
    });
    const summary = JSON.parse(await readFile(report, 'utf8')) as { testResults: Array<{ assertionResults: JsonTest[] }> };
    return summary.testResults.flatMap((file) => file.assertionResults);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function printedReplay(test: JsonTest): { command: string; counterexample: string } {
  const message = test.failureMessages.join('\n');
  const command = /Replay it with\n {2}(.+)\n/.exec(message)?.[1];
  const counterexample = /Counterexample: (.+)/.exec(message)?.[1];
  expect(command, `${test.fullName} printed no replay command: ${message.slice(0, 500)}`).toBeDefined();
  expect(counterexample).toBeDefined();
  return { command: command!, counterexample: counterexample! };
}

describe('replay commands printed by checkProperty', () => {
  it('select, as a -t pattern (a RegExp, like vitest), the full name of the test that printed them and no other', () => {
    const test = TestRunner.getCurrentTest()!;
    const fullName = vitestFullName(test);
    // vitest's own view of this test's name, with its ' > ' between suite and test.
    expect(fullName).toBe(expect.getState().currentTestName!.replaceAll(' > ', ' '));
    const pattern = new RegExp(testNamePattern(fullName));
    expect(pattern.test(fullName)).toBe(true);
    for (const other of [`${fullName} too`, `a ${fullName}`, fullName.slice(1)]) expect(pattern.test(other), other).toBe(false);

    const tricky = "n < 7? [$HOME] 'q' \\d+ a|b (x) {2} ^.*/";
    const trickyPattern = new RegExp(testNamePattern(tricky));
    expect(trickyPattern.test(tricky)).toBe(true);
    // Unescaped, these would match: regex syntax in a name is literal in its pattern.
    for (const other of [tricky.replace('.*', 'anything'), tricky.replace('7?', '')]) expect(trickyPattern.test(other), other).toBe(false);
    const command = replayCommand([['BRIDGE_PROPERTY_PATH', '5:1']], { name: tricky, file: { filepath: join(process.cwd(), FIXTURE) } });
    expect(command.startsWith(`BRIDGE_PROPERTY_PATH=5:1 npx vitest run ${FIXTURE} -t '`)).toBe(true);
  });

  it(
    'run exactly the failing test, with the same counterexample, when pasted into a shell as printed',
    async () => {
      const failing = await vitestInShell(`npx vitest run ${FIXTURE}`);
      expect(failing.map((test) => test.status)).toEqual(['failed', 'failed', 'failed']);
      for (const test of failing) {
        const printed = printedReplay(test);
        const replayed = await vitestInShell(printed.command);
        const ran = replayed.filter((result) => result.status !== 'skipped' && result.status !== 'pending');
        expect(
          ran.map((result) => result.fullName),
          printed.command,
        ).toEqual([test.fullName]);
        expect(ran[0]!.status).toBe('failed');
        expect(replayed).toHaveLength(failing.length);
        expect(printedReplay(ran[0]!).counterexample).toBe(printed.counterexample);
      }
    },
    4 * CHILD_TIMEOUT_MS,
  );
});
