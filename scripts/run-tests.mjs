#!/usr/bin/env node
// Runs the whole vitest suite and ends with the plain `N passed, N failed` line that CI logs
// are read for, after the slowest files (docs/testing.md keeps each file under FILE_BUDGET_S:
// one file over it is the suite's wall time) and the suite's wall time with the machine's load
// average at its start and end (a wall time means little without the load it ran under).
// Vitest's own exit code is kept: a failure anywhere fails the command.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const FILE_BUDGET_S = 40;
const SLOWEST_SHOWN = 5;

const dir = mkdtempSync(join(tmpdir(), 'bridge-tests-'));
const report = join(dir, 'vitest.json');
const logTypesDir = join(dir, 'log-types');
mkdirSync(logTypesDir);
const vitest = join(process.cwd(), 'node_modules', 'vitest', 'vitest.mjs');
const startedAt = performance.now();
const loadAtStart = loadavg()[0];
const run = spawnSync(
  process.execPath,
  [vitest, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)],
  { stdio: 'inherit', env: { ...process.env, BRIDGE_LOG_TYPES_DIR: logTypesDir } },
);

let passed = 0;
let failed = 0;
let skipped = 0;
let slowest = [];
try {
  const summary = JSON.parse(readFileSync(report, 'utf8'));
  passed = summary.numPassedTests;
  failed = summary.numFailedTests;
  skipped = summary.numPendingTests + summary.numTodoTests;
  slowest = slowestFiles(summary.testResults);
  const conflicts = logTypeConflicts();
  for (const conflict of conflicts) console.error(`run-tests: ${conflict}`);
  failed += conflicts.length;
} catch (err) {
  console.error(`run-tests: could not read the vitest JSON report at ${report}: ${err.message}`);
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

/** The files that took longest, each with its wall time and a mark when over the budget. */
function slowestFiles(files) {
  return files
    .map((file) => ({ name: relative(process.cwd(), file.name), seconds: (file.endTime - file.startTime) / 1000 }))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, SLOWEST_SHOWN)
    .map(({ name, seconds }) => `${name} ${seconds.toFixed(1)} s${seconds > FILE_BUDGET_S ? ` (over ${FILE_BUDGET_S} s)` : ''}`);
}

if (slowest.length > 0) console.log(`slowest files: ${slowest.join(', ')}`);
const wallS = (performance.now() - startedAt) / 1000;
console.log(`suite: ${wallS.toFixed(0)} s, load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end`);
const status = run.status ?? 1;
if (status !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(status !== 0 ? status : failed > 0 ? 1 : 0);
