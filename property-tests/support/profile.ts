import { relative } from 'node:path';
import fc from 'fast-check';
import { TestRunner } from 'vitest';

/**
 * How much a property run does, and how to replay one. `npm test` runs the fast profile;
 * `npm run test:property:long` sets BRIDGE_PROPERTY_PROFILE=long. A failure prints the seed and
 * path to replay it with BRIDGE_PROPERTY_SEED and BRIDGE_PROPERTY_PATH (and, for command
 * sequences, BRIDGE_PROPERTY_REPLAY_PATH), which replay the shrunk counterexample directly.
 */

export type PropertyProfile = 'fast' | 'long';

export interface ReplaySettings {
  /** BRIDGE_PROPERTY_RUNS: overrides the profile's number of runs (exploring, or a quick replay). */
  runs?: number;
  seed?: number;
  path?: string;
  /** fc.commands' replayPath: which generated commands actually ran (their preconditions held). */
  commandsReplayPath?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

export function propertyProfile(env: Env = process.env): PropertyProfile {
  const value = env['BRIDGE_PROPERTY_PROFILE'];
  if (value === undefined || value === '' || value === 'fast') return 'fast';
  if (value === 'long') return 'long';
  throw new Error(`BRIDGE_PROPERTY_PROFILE must be "fast" or "long", got ${JSON.stringify(value)}`);
}

export function replaySettings(env: Env = process.env): ReplaySettings {
  const settings: ReplaySettings = {};
  const runs = env['BRIDGE_PROPERTY_RUNS'];
  if (runs !== undefined && runs !== '') {
    if (!/^[1-9][0-9]*$/.test(runs)) throw new Error(`BRIDGE_PROPERTY_RUNS must be a positive integer, got ${JSON.stringify(runs)}`);
    settings.runs = Number(runs);
  }
  const seed = env['BRIDGE_PROPERTY_SEED'];
  if (seed !== undefined && seed !== '') {
    if (!/^-?[0-9]+$/.test(seed)) throw new Error(`BRIDGE_PROPERTY_SEED must be an integer, got ${JSON.stringify(seed)}`);
    settings.seed = Number(seed);
  }
  const path = env['BRIDGE_PROPERTY_PATH'];
  if (path !== undefined && path !== '') {
    if (settings.seed === undefined) throw new Error('BRIDGE_PROPERTY_PATH replays a failure only together with its BRIDGE_PROPERTY_SEED');
    settings.path = path;
  }
  const replayPath = env['BRIDGE_PROPERTY_REPLAY_PATH'];
  if (replayPath !== undefined && replayPath !== '') settings.commandsReplayPath = replayPath;
  return settings;
}

/**
 * Runs the property; on failure throws one error whose message starts with the replay command
 * (vitest prints an error's message in full) followed by fast-check's report: the seed, the
 * path and the shrunk counterexample.
 */
export async function checkProperty<Ts>(name: string, property: fc.IAsyncProperty<Ts>, numRuns: number, timeLimitMs?: number): Promise<void> {
  const replay = replaySettings();
  const details = await fc.check(property, {
    numRuns: replay.runs ?? numRuns,
    // Shrinking a long counterexample can outlast the test's timeout, which would lose it: stop
    // in time and report the smallest one found; replaying its seed and path resumes shrinking.
    ...(timeLimitMs === undefined ? {} : { skipAllAfterTimeLimit: timeLimitMs }),
    ...(replay.seed === undefined ? {} : { seed: replay.seed }),
    ...(replay.path === undefined ? {} : { path: replay.path }),
    endOnFailure: replay.path !== undefined,
    includeErrorInReport: true,
  });
  if (!details.failed) return;
  const report = (await fc.asyncDefaultReportMessage(details)) ?? 'no report';
  const commandsReplay = /replayPath="([^"]*)"/.exec(report)?.[1];
  const variables: Array<[string, string]> = [
    // The arbitraries depend on the profile: a long-profile counterexample replays only in it.
    ...(propertyProfile() === 'long' ? [['BRIDGE_PROPERTY_PROFILE', 'long'] as [string, string]] : []),
    ['BRIDGE_PROPERTY_SEED', String(details.seed)],
    ['BRIDGE_PROPERTY_PATH', details.counterexamplePath ?? ''],
    ...(commandsReplay === undefined ? [] : [['BRIDGE_PROPERTY_REPLAY_PATH', commandsReplay] as [string, string]]),
  ];
  throw new Error(`${name}: property failed. Replay it with\n  ${replayCommand(variables, runningTest())}\n\n${report}`);
}

/** What of a vitest test its replay command needs: its name, its suites', its file. */
export interface TestTask {
  name: string;
  suite?: TestTask | undefined;
  file: { filepath: string };
}

function runningTest(): TestTask {
  const test = TestRunner.getCurrentTest();
  if (test === undefined) throw new Error('checkProperty runs only inside a vitest test: its replay command names that test');
  return test;
}

/**
 * The name vitest matches `-t` against (@vitest/runner's getTaskFullName): the enclosing
 * suites' names and the test's, joined by single spaces.
 */
export function vitestFullName(task: Omit<TestTask, 'file'>): string {
  return task.suite === undefined ? task.name : `${vitestFullName(task.suite)} ${task.name}`;
}

/** A `-t` pattern (vitest compiles it with `new RegExp`) that matches this full name and no other. */
export function testNamePattern(fullName: string): string {
  return `^${fullName.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')}$`;
}

/** A shell word for the value: as is when plain, else in POSIX single quotes (nothing expands). */
function shellQuote(value: string): string {
  return /^[\w./:=-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

/** The command that, pasted into a shell at the repository root, runs this one test again. */
export function replayCommand(variables: ReadonlyArray<readonly [string, string]>, test: TestTask): string {
  const assignments = variables.map(([key, value]) => `${key}=${shellQuote(value)}`);
  const file = relative(process.cwd(), test.file.filepath);
  return [...assignments, 'npx vitest run', shellQuote(file), '-t', shellQuote(testNamePattern(vitestFullName(test)))].join(' ');
}
