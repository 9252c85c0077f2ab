#!/usr/bin/env node
// Runs the whole vitest suite and ends with the plain `N passed, N failed` line that CI logs
// are read for, after the slowest files (docs/testing.md keeps each file under FILE_BUDGET_S:
// one file over it is the suite's wall time) and the suite's wall time with the machine's load
// average at its start and end (a wall time means little without the load it ran under).
// Vitest's own exit code is kept: a failure anywhere fails the command.
// `--record-seconds` writes each file's wall time into test/file-seconds.json, which
// vitest.config.ts schedules from (longest first); files the record does not know are named.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const FILE_BUDGET_S = 40;
const SLOWEST_SHOWN = 10;
const RECORD = 'test/file-seconds.json';
const RECORD_FLAG = '--record-seconds';
const recording = process.argv.includes(RECORD_FLAG);
const vitestArgs = process.argv.slice(2).filter((arg) => arg !== RECORD_FLAG);

const dir = mkdtempSync(join(tmpdir(), 'bridge-tests-'));
const logTypesDir = join(dir, 'log-types');
mkdirSync(logTypesDir);
const vitest = join(process.cwd(), 'node_modules', 'vitest', 'vitest.mjs');
const startedAt = performance.now();
const loadAtStart = loadavg()[0];
// The whole suite: the `long` group (vitest.config.ts) in a vitest of its own beside the other
// two, since one vitest runs its groups one after the other. A run narrowed by arguments is one vitest.
const runs =
  vitestArgs.length === 0
    ? [
        ['--project', 'wide', '--project', 'timed'],
        ['--project', 'long'],
      ]
    : [vitestArgs];
const reports = runs.map((_, i) => join(dir, `vitest-${i}.json`));
const statuses = await Promise.all(runs.map((args, i) => runVitest(args, reports[i])));

function runVitest(args, report) {
  const child = spawn(process.execPath, [vitest, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...args], {
    stdio: 'inherit',
    env: { ...process.env, BRIDGE_LOG_TYPES_DIR: logTypesDir },
  });
  return new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
}

let passed = 0;
let failed = 0;
let skipped = 0;
let slowest = [];
let unrecorded = [];
try {
  const summaries = reports.map((report) => JSON.parse(readFileSync(report, 'utf8')));
  for (const summary of summaries) {
    passed += summary.numPassedTests;
    failed += summary.numFailedTests;
    skipped += summary.numPendingTests + summary.numTodoTests;
  }
  const files = fileSeconds(summaries.flatMap((summary) => summary.testResults));
  slowest = slowestFiles(files);
  if (recording) record(files);
  else unrecorded = Object.keys(files).filter((name) => !(name in recordedSeconds()));
  const conflicts = logTypeConflicts();
  for (const conflict of conflicts) console.error(`run-tests: ${conflict}`);
  failed += conflicts.length;
} catch (err) {
  console.error(`run-tests: could not read a vitest JSON report in ${dir}: ${err.message}`);
  failed = Math.max(failed, 1);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Key paths of the servers' log lines that one worker wrote with one JSON type and another worker
 * with another (test/support/log-lines.ts checks within a worker): a log index maps a field by
 * the first line it sees and refuses the others.
 */
function logTypeConflicts() {
  const first = new Map();
  const conflicts = [];
  for (const file of readdirSync(logTypesDir)) {
    for (const text of readFileSync(join(logTypesDir, file), 'utf8').split('\n')) {
      if (text === '') continue;
      const { path, type, line } = JSON.parse(text);
      const seen = first.get(path);
      if (seen === undefined) first.set(path, { type, line });
      else if (seen.type !== type && !conflicts.some((conflict) => conflict.startsWith(`the log key "${path}" `))) {
        conflicts.push(`the log key "${path}" is of type ${type} in one worker's line, ${seen.type} in another's: ${line} / ${seen.line}`);
      }
    }
  }
  return conflicts;
}

/** Each file's wall time in seconds, by its path from the repository's root. */
function fileSeconds(testResults) {
  return Object.fromEntries(testResults.map((file) => [relative(process.cwd(), file.name), (file.endTime - file.startTime) / 1000]));
}

function recordedSeconds() {
  return JSON.parse(readFileSync(RECORD, 'utf8')).seconds;
}

/** This run's files replace their entries; the others stay while they exist (a run of one folder records that folder). */
function record(files) {
  const kept = Object.entries(existsSync(RECORD) ? recordedSeconds() : {}).filter(([name]) => existsSync(name));
  const measured = Object.entries(files).map(([name, seconds]) => [name, Math.round(seconds * 10) / 10]);
  const seconds = Object.fromEntries([...kept, ...measured].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  writeFileSync(RECORD, `${JSON.stringify({ seconds }, null, 2)}\n`);
  console.log(`run-tests: recorded ${measured.length} files' wall times in ${RECORD} (vitest.config.ts starts the longest first)`);
}

/** The files that took longest, each with its wall time and a mark when over the budget. */
function slowestFiles(files) {
  return Object.entries(files)
    .map(([name, seconds]) => ({ name, seconds }))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, SLOWEST_SHOWN)
    .map(({ name, seconds }) => `${name} ${seconds.toFixed(1)} s${seconds > FILE_BUDGET_S ? ` (over ${FILE_BUDGET_S} s)` : ''}`);
}

if (slowest.length > 0) console.log(`slowest files: ${slowest.join(', ')}`);
if (unrecorded.length > 0) console.log(`not in ${RECORD}, so started first: ${unrecorded.join(', ')} (record them: npm test -- ${RECORD_FLAG})`);
const wallS = (performance.now() - startedAt) / 1000;
console.log(`suite: ${wallS.toFixed(0)} s, load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end`);
const status = statuses.find((code) => code !== 0) ?? 0;
if (status !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(status !== 0 ? status : failed > 0 ? 1 : 0);
