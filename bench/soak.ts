/**
 * `npm run soak -- --minutes N [--authorities 3 --threshold 2 --seeded 60000 --rate 500]`: hours
 * of traffic with faults against real server processes (bench/soak/run-soak.ts). Not in CI: a
 * 15-second profile of it runs in `npm test` (test/bench/soak.test.ts). Prints the tables and
 * writes bench/results/soak.json; a failed end-of-run check is printed and sets exit code 1.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { formatTable, writeResult } from './report.js';
import { defaultSeededEntries, runSoak, soakCapacity, SOAK_DEFAULTS, type SoakOptions } from './soak/run-soak.js';

const RESULTS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'results');
const USAGE = 'usage: npm run soak -- --minutes N [--authorities 3] [--threshold 2] [--seeded 60000] [--rate 500]\n';

function positiveNumber(raw: string | undefined, name: string, fallback: number, max: number, integer: boolean): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > max || (integer && !Number.isInteger(value))) {
    throw new Error(`--${name} must be ${integer ? 'an integer' : 'a number'} in (0, ${max}], got ${JSON.stringify(raw)}`);
  }
  return value;
}

function parseOptions(argv: string[], signal: AbortSignal): SoakOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      minutes: { type: 'string' },
      authorities: { type: 'string' },
      threshold: { type: 'string' },
      seeded: { type: 'string' },
      rate: { type: 'string' },
    },
    strict: true,
  });
  if (values.minutes === undefined) throw new Error('--minutes is required');
  const authorities = positiveNumber(values.authorities, 'authorities', SOAK_DEFAULTS.authorities, 16, true);
  const threshold = positiveNumber(values.threshold, 'threshold', SOAK_DEFAULTS.threshold, authorities, true);
  const minutes = positiveNumber(values.minutes, 'minutes', 0, 24 * 60, false);
  const run = { minutes, depositsPerSecond: SOAK_DEFAULTS.depositsPerSecond };
  const options: SoakOptions = {
    ...SOAK_DEFAULTS,
    minutes,
    authorities,
    threshold,
    seededEntries: positiveNumber(values.seeded, 'seeded', defaultSeededEntries(run), 65_530, true),
    healthRate: positiveNumber(values.rate, 'rate', SOAK_DEFAULTS.healthRate, 10_000, true),
    signal,
  };
  soakCapacity(options);
  return options;
}

async function main(): Promise<number> {
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort(new Error('interrupted')));
  let options: SoakOptions;
  try {
    options = parseOptions(process.argv.slice(2), controller.signal);
  } catch (err) {
    process.stderr.write(`soak: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const startedAt = new Date();
  const begin = performance.now();
  const result = await runSoak(options);
  const path = await writeResult(RESULTS_DIR, result, startedAt, performance.now() - begin);
  for (const table of result.tables) console.log(`${formatTable(table)}\n`);
  for (const failure of result.failures) console.log(`FAILED CHECK: ${failure}`);
  console.log(`wrote ${path}`);
  return result.failures.length === 0 ? 0 : 1;
}

process.exitCode = await main();
