/**
 * `npm run bench [-- name...]`: runs every bench, or the named ones in the order given, prints
 * each table and writes bench/results/<name>.json. Informational: a failed check is printed and
 * sets exit code 1 for whoever runs it by hand, and nothing in CI runs this.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { congestedLandingBench } from './congested-landing.js';
import { faultRecoveryBench } from './fault-recovery.js';
import { feeMarketBench } from './fee-market.js';
import { handoverBench } from './handover.js';
import { healthUnderMetricsBench, healthUnderTransfersBench } from './health-under-transfers.js';
import { httpBench } from './http.js';
import { readCostBench } from './read-cost.js';
import { signingBench } from './signing.js';
import { surgeLandingBench } from './surge-landing.js';
import { formatTable, machineInfo, writeResult, type Bench } from './report.js';
import { transferLatencyBench } from './transfer-latency.js';
import { transferThroughputBench } from './transfer-throughput.js';

const BENCHES: readonly Bench[] = [
  readCostBench,
  transferThroughputBench,
  transferLatencyBench,
  faultRecoveryBench,
  httpBench,
  signingBench,
  feeMarketBench,
  healthUnderTransfersBench,
  healthUnderMetricsBench,
  surgeLandingBench,
  handoverBench,
  congestedLandingBench,
];
const RESULTS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'results');
const USAGE = `usage: npm run bench [-- [--list] [name...]]\nbenches: ${BENCHES.map((bench) => bench.name).join(', ')}`;

class UsageError extends Error {}

interface Selection {
  list: boolean;
  benches: Bench[];
}

function parseBenchArgs(args: readonly string[]) {
  try {
    return parseArgs({ args: [...args], options: { list: { type: 'boolean' }, help: { type: 'boolean' } }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`bench: ${(err as Error).message}`);
  }
}

function selectBenches(args: readonly string[]): Selection {
  const parsed = parseBenchArgs(args);
  if (parsed.values.help === true) return { list: true, benches: [] };
  const names = parsed.positionals;
  const seen = new Set<string>();
  const benches = names.map((name) => {
    const bench = BENCHES.find((candidate) => candidate.name === name);
    if (bench === undefined) throw new UsageError(`bench: unknown bench "${name}" (known: ${BENCHES.map((known) => known.name).join(', ')})`);
    if (seen.has(name)) throw new UsageError(`bench: "${name}" is named twice`);
    seen.add(name);
    return bench;
  });
  return { list: parsed.values.list === true, benches: names.length === 0 ? [...BENCHES] : benches };
}

async function runBench(bench: Bench, signal: AbortSignal): Promise<string[]> {
  console.log(`\n## ${bench.name}: ${bench.description}\n`);
  const startedAt = new Date();
  const begin = performance.now();
  const result = await bench.run(signal);
  const path = await writeResult(RESULTS_DIR, result, startedAt, performance.now() - begin);
  for (const table of result.tables) console.log(`${formatTable(table)}\n`);
  for (const failure of result.failures) console.log(`FAILED CHECK: ${failure}`);
  console.log(`wrote ${path} (${((performance.now() - begin) / 1000).toFixed(1)} s)`);
  return result.failures.map((failure) => `${bench.name}: ${failure}`);
}

async function main(): Promise<void> {
  const { list, benches } = selectBenches(process.argv.slice(2));
  if (list) {
    console.log(USAGE);
    for (const bench of BENCHES) console.log(`  ${bench.name.padEnd(20)} ${bench.description}`);
    return;
  }
  const stop = new AbortController();
  const onSignal = () => stop.abort(new Error('interrupted'));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const machine = machineInfo();
  console.log(`node ${machine.node} on ${machine.cpuModel} (${machine.cores} cores, ${machine.totalMemoryMiB} MiB), ${new Date().toISOString()}`);
  const failures: string[] = [];
  try {
    for (const bench of benches) {
      stop.signal.throwIfAborted();
      failures.push(...(await runBench(bench, stop.signal)));
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  if (failures.length > 0) {
    console.log(`\n${failures.length} failed check(s):\n${failures.map((failure) => `  ${failure}`).join('\n')}`);
    process.exitCode = 1;
  }
}

main().catch((err: unknown) => {
  if (err instanceof UsageError) {
    console.error(`${err.message}\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  console.error(err);
  process.exitCode = 1;
});
