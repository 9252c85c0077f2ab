import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeDepositEntries, decodeTrackerHeader } from '../../src/chain/codec/accounts.js';
import { entryOffset } from '../../src/chain/codec/layout.js';
import { startChainPair, type ChainPair } from '../../src/devnet/chain-pair.js';
import { serverEnv } from '../../src/devnet/server-env.js';
import { summarizeTransfers } from '../../src/devnet/summary.js';
import { startTraffic } from '../../src/devnet/traffic.js';
import { bootstrapWorld, type World } from '../../src/devnet/world/bootstrap.js';
import { sleep } from '../../src/time.js';
import { percentile, type BenchResult, type Row } from '../report.js';
import { explainingFault, startFaultSchedule } from './fault-schedule.js';
import { measureHealth, type HealthLatency } from './health-load.js';
import { sampleServer, slope, type ServerSample } from './server-samples.js';

/**
 * The soak (`npm run soak`): a devnet with pre-seeded trackers, bridge servers as separate
 * processes (the real dist/index.js), continuous traffic, RPC faults switching on and off; then
 * a drain, the end-of-run checks and a report with the targets beside the measurements.
 */

export interface SoakOptions {
  minutes: number;
  authorities: number;
  threshold: number;
  /** Settled transfers written into both trackers before the run (no transactions). */
  seededEntries: number;
  /** /health requests per second during the measurements. */
  healthRate: number;
  healthSeconds: number;
  depositsPerSecond: number;
  /** How long each fault phase (and each quiet phase between them) lasts. */
  faultPhaseMs: number;
  signal: AbortSignal;
}

export const SOAK_DEFAULTS = {
  authorities: 3,
  threshold: 2,
  seededEntries: 60_000,
  healthRate: 500,
  healthSeconds: 20,
  depositsPerSecond: 2,
  faultPhaseMs: 15_000,
};

const SERVER_ENTRY = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'index.js');
/** Room for the run's own transfers above the seeded ones; a DepositTracker holds 65,530 at most. */
const TRAFFIC_CAPACITY = 4_096;
const SAMPLE_INTERVAL_MS = 2_000;
const STARTUP_TIMEOUT_MS = 30_000;
const DRAIN_TIMEOUT_MS = 180_000;
const IDLE_CYCLES_MS = 10_000;
const STOP_DEADLINE_MS = 10_000;
const MIB = 1_048_576;
const TARGETS = { steadyRssMiB: 150, busyOverIdleP99: 1.5, idleHealthP99Ms: 5 };

interface SoakServer {
  index: number;
  origin: string;
  logPath: string;
  child: ChildProcess;
  exited: Promise<void>;
  samples: ServerSample[];
}

export async function runSoak(options: SoakOptions): Promise<BenchResult> {
  if (!existsSync(SERVER_ENTRY)) throw new Error(`${SERVER_ENTRY} is missing: run npm run build first`);
  const dir = await mkdtemp(join(tmpdir(), 'bridge-soak-'));
  const pair = await startChainPair();
  const servers: SoakServer[] = [];
  try {
    const world = await bootstrapWorld(pair, {
      authorities: options.authorities,
      threshold: options.threshold,
      capacity: options.seededEntries + TRAFFIC_CAPACITY,
      dir,
    });
    pair.seedSettledDeposits(options.seededEntries);
    const before = { lamports: authorityLamports(pair, world), landed: world.authorities.map(({ publicKey }) => landedBy(pair, publicKey)) };
    const ports = await freePorts(options.authorities);
    for (const [k, port] of ports.entries()) servers.push(spawnServer(world, k, port, dir));
    await Promise.all(servers.map((server) => waitForHealth(server, options.signal)));
    return await soak(pair, world, servers, before, options);
  } finally {
    await Promise.all(servers.map((server) => stopServer(server)));
    await pair.close();
    await rm(dir, { recursive: true, force: true });
  }
}

interface Baseline {
  lamports: bigint[];
  /** What the world's bootstrap landed with each authority's key before the servers started. */
  landed: Array<{ landed: number; failed: number }>;
}

async function soak(pair: ChainPair, world: World, servers: SoakServer[], before: Baseline, options: SoakOptions): Promise<BenchResult> {
  const startedMs = Date.now();
  const durationMs = options.minutes * 60_000;
  const trafficErrors: string[] = [];
  const traffic = startTraffic(pair, world, { depositsPerSecond: options.depositsPerSecond, seed: 7, onError: (err) => trafficErrors.push(String(err)) });
  const faults = startFaultSchedule(pair, options.faultPhaseMs);
  const sampler = startSampling(servers);
  let busyHealth: HealthLatency | undefined;
  try {
    // The busy measurement sits in the middle of the run, with traffic and faults going.
    await sleep(Math.max(0, durationMs / 2 - (options.healthSeconds * 1000) / 2), options.signal);
    busyHealth = await measureHealth(`${servers[0]!.origin}/health`, options.healthRate, options.healthSeconds);
    await sleep(Math.max(0, startedMs + durationMs - Date.now()), options.signal);
  } finally {
    faults.stop();
    traffic.stopDeposits();
  }
  const drained = await drain(pair, world, options.signal);
  await traffic.stop();
  const idleHealth = await measureHealth(`${servers[0]!.origin}/health`, options.healthRate, options.healthSeconds);
  const idle = await idleCycleCost(servers, options.signal);
  sampler.stop();
  return report({ pair, world, servers, before, options, injected: faults.injected(), traffic: traffic.stats(), trafficErrors, drained, busyHealth, idleHealth, idle, startedMs });
}

function spawnServer(world: World, k: number, port: number, dir: string): SoakServer {
  const logPath = join(dir, `server-${k}.log`);
  const log = openSync(logPath, 'a', 0o600);
  const child = spawn(process.execPath, [SERVER_ENTRY], { env: { ...process.env, ...serverEnv(world, k, port) }, stdio: ['ignore', log, log] });
  closeSync(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { index: k, origin: `http://127.0.0.1:${port}`, logPath, child, exited, samples: [] };
}

async function waitForHealth(server: SoakServer, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null) throw new Error(`bridge server ${server.index} exited at startup; see ${server.logPath}`);
    const answered = await fetch(`${server.origin}/health`, { signal: AbortSignal.timeout(1_000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (answered) return;
    await sleep(200, signal);
  }
  throw new Error(`bridge server ${server.index} did not answer /health within ${STARTUP_TIMEOUT_MS / 1000} s`);
}

async function stopServer(server: SoakServer): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGTERM');
  const late = await Promise.race([server.exited.then(() => false), sleep(STOP_DEADLINE_MS, new AbortController().signal).then(() => true)]);
  if (late) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
}

function startSampling(servers: SoakServer[]): { stop(): void } {
  const startedMs = Date.now();
  const timer = setInterval(() => {
    for (const server of servers) {
      void sampleServer(`${server.origin}/metrics`, Date.now() - startedMs).then((sample) => {
        if (sample !== undefined) server.samples.push(sample);
      });
    }
  }, SAMPLE_INTERVAL_MS);
  return { stop: () => clearInterval(timer) };
}

/** Waits until every deposit is relayed back and cleaned up (settled_prefix = entry_count). */
async function drain(pair: ChainPair, world: World, signal: AbortSignal): Promise<{ settled: boolean; drainMs: number }> {
  const started = Date.now();
  while (Date.now() - started < DRAIN_TIMEOUT_MS) {
    const data = pair.source.bank.account(world.source.depositTracker)?.data;
    const header = data === undefined ? undefined : decodeTrackerHeader(data, 'DepositTracker', world.source.depositTracker);
    if (header !== undefined && header.settledPrefix === header.entryCount) return { settled: true, drainMs: Date.now() - started };
    await sleep(500, signal);
  }
  return { settled: false, drainMs: Date.now() - started };
}

/** RPC requests per cycle while nothing is pending: the cost of an idle authority. */
async function idleCycleCost(servers: SoakServer[], signal: AbortSignal): Promise<Array<{ requestsPerCycle: number }>> {
  const before = await Promise.all(servers.map((server) => sampleServer(`${server.origin}/metrics`, 0)));
  await sleep(IDLE_CYCLES_MS, signal);
  const after = await Promise.all(servers.map((server) => sampleServer(`${server.origin}/metrics`, 0)));
  return servers.map((_, k) => {
    const cycles = (after[k]?.cycles ?? 0) - (before[k]?.cycles ?? 0);
    const requests = (after[k]?.rpcRequests ?? 0) - (before[k]?.rpcRequests ?? 0);
    return { requestsPerCycle: cycles > 0 ? requests / cycles : Number.NaN };
  });
}

function authorityLamports(pair: ChainPair, world: World): bigint[] {
  return world.authorities.map(
    ({ publicKey }) => (pair.source.bank.account(publicKey)?.lamports ?? 0n) + (pair.target.bank.account(publicKey)?.lamports ?? 0n),
  );
}

/** Transactions that landed listing the authority on both chains: in a soak only its own. */
function landedBy(pair: ChainPair, key: string): { landed: number; failed: number } {
  let landed = 0;
  let failed = 0;
  for (const node of [pair.source, pair.target]) {
    for (const entry of node.bank.signaturesForAddress(key, { limit: 1_000_000 })) {
      landed += 1;
      if (entry.err !== null) failed += 1;
    }
  }
  return { landed, failed };
}

/** Every error or fatal line of a server's log, with the fault that explains it (if any). */
function errorLines(server: SoakServer): { explained: Record<string, number>; unexplained: string[] } {
  const explained: Record<string, number> = {};
  const unexplained: string[] = [];
  for (const line of readFileSync(server.logPath, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    const record = JSON.parse(line) as { level?: string };
    if (record.level !== 'error' && record.level !== 'fatal') continue;
    const kind = explainingFault(line);
    if (kind === undefined) unexplained.push(line.slice(0, 400));
    else explained[kind] = (explained[kind] ?? 0) + 1;
  }
  return { explained, unexplained };
}

function completedTransfers(pair: ChainPair, world: World): { total: number; completed: number } {
  const data = pair.source.bank.account(world.source.depositTracker)?.data;
  if (data === undefined) return { total: 0, completed: 0 };
  const header = decodeTrackerHeader(data, 'DepositTracker', world.source.depositTracker);
  const count = Number(header.entryCount);
  const entries = decodeDepositEntries(data.subarray(entryOffset('DepositTracker', 0), entryOffset('DepositTracker', count)), world.source.depositTracker, 0);
  return { total: count, completed: entries.filter((entry) => entry.status === 'Finalized' && entry.cleanupCompleted).length };
}

interface ReportInput {
  pair: ChainPair;
  world: World;
  servers: SoakServer[];
  before: Baseline;
  options: SoakOptions;
  injected: Record<string, number>;
  traffic: { deposits: number; claims: number; errors: number };
  trafficErrors: string[];
  drained: { settled: boolean; drainMs: number };
  busyHealth: HealthLatency | undefined;
  idleHealth: HealthLatency;
  idle: Array<{ requestsPerCycle: number }>;
  startedMs: number;
}

function report(input: ReportInput): BenchResult {
  const { pair, world, servers, options, drained, busyHealth, idleHealth } = input;
  const failures: string[] = [];
  const transfers = completedTransfers(pair, world);
  if (!drained.settled || transfers.completed !== transfers.total) {
    failures.push(`${transfers.total - transfers.completed} of ${transfers.total} transfers not completed within ${DRAIN_TIMEOUT_MS / 1000} s of the drain`);
  }
  const lamportsAfter = authorityLamports(pair, world);
  const serverRows: Row[] = servers.map((server, k) => {
    const key = world.authorities[k]!.publicKey;
    const total = landedBy(pair, key);
    const landed = total.landed - input.before.landed[k]!.landed;
    const failed = total.failed - input.before.landed[k]!.failed;
    const feesPaid = Number((input.before.lamports[k]! - lamportsAfter[k]!) / 5_000n);
    if (feesPaid !== landed) failures.push(`authority ${k}: fees paid for ${feesPaid} transactions, ${landed} landed`);
    const lines = errorLines(server);
    if (lines.unexplained.length > 0) failures.push(`server ${k}: ${lines.unexplained.length} error lines no fault explains, first: ${lines.unexplained[0]}`);
    const memory = memoryFigures(server.samples);
    return {
      server: k,
      steadyRssMiB: memory.steadyMiB,
      peakRssMiB: memory.peakMiB,
      rssSlopeMiBPerHour: memory.slopeMiBPerHour,
      eventLoopP99Ms: percentile(server.samples.map((sample) => sample.eventLoopP99Ms), 99),
      landed,
      landedWithError: failed,
      feesPaid,
      idleRpcPerCycle: input.idle[k]?.requestsPerCycle ?? Number.NaN,
      errorLinesExplained: Object.values(lines.explained).reduce((sum, count) => sum + count, 0),
      errorLinesUnexplained: lines.unexplained.length,
      samples: server.samples.length,
    };
  });
  const summary = summarizeTransfers(pair, world);
  const healthRow = (load: string, latency: HealthLatency | undefined): Row => ({
    load,
    requests: latency?.requests ?? null,
    errors: latency?.errors ?? null,
    p50Ms: latency?.p50Ms ?? null,
    p99Ms: latency?.p99Ms ?? null,
    maxMs: latency?.maxMs ?? null,
  });
  const steadyWorst = Math.max(...serverRows.map((row) => Number(row.steadyRssMiB)));
  const busyOverIdle = busyHealth === undefined ? Number.NaN : busyHealth.p99Ms / Math.max(idleHealth.p99Ms, 1);
  return {
    name: 'soak',
    parameters: { ...options, signal: undefined, seeded: options.seededEntries },
    failures,
    tables: [
      {
        title: `Soak: ${options.minutes} min, ${options.authorities} servers (threshold ${options.threshold}), ${options.seededEntries} seeded transfers`,
        columns: [
          { key: 'what', header: 'what' },
          { key: 'value', header: 'measured' },
          { key: 'target', header: 'target' },
        ],
        rows: [
          { what: 'transfers during the run (deposits; completed after the drain)', value: `${input.traffic.deposits}; ${transfers.completed - options.seededEntries} of ${transfers.total - options.seededEntries}`, target: 'all' },
          { what: 'drain after traffic stopped', value: `${(drained.drainMs / 1000).toFixed(1)} s`, target: '-' },
          { what: 'claims, traffic errors', value: `${input.traffic.claims}, ${input.traffic.errors}`, target: '-' },
          { what: 'confirmed / rejected / relayed / cleaned up', value: `${summary.confirmed} / ${summary.rejected} / ${summary.relayed} / ${summary.cleanedUp}`, target: '-' },
          { what: 'fault phases injected (both chains)', value: Object.entries(input.injected).map(([kind, count]) => `${kind} ×${count}`).join('; '), target: '-' },
          { what: 'steady RSS, worst server', value: `${steadyWorst.toFixed(1)} MiB`, target: `< ${TARGETS.steadyRssMiB} MiB, flat over the second half` },
          { what: '/health p99 busy / idle', value: `${busyHealth?.p99Ms ?? '-'} ms / ${idleHealth.p99Ms} ms (${busyOverIdle.toFixed(2)}x)`, target: `<= ${TARGETS.busyOverIdleP99}x; idle < ${TARGETS.idleHealthP99Ms} ms` },
        ],
      },
      {
        title: 'Per server',
        columns: [
          { key: 'server', header: 'server' },
          { key: 'steadyRssMiB', header: 'steady RSS (MiB)', digits: 1 },
          { key: 'peakRssMiB', header: 'peak RSS (MiB)', digits: 1 },
          { key: 'rssSlopeMiBPerHour', header: 'RSS slope, 2nd half (MiB/h)', digits: 1 },
          { key: 'eventLoopP99Ms', header: 'event-loop delay p99 (ms)', digits: 1 },
          { key: 'landed', header: 'landed tx' },
          { key: 'landedWithError', header: 'with error' },
          { key: 'feesPaid', header: 'fees paid (tx)' },
          { key: 'idleRpcPerCycle', header: 'RPC calls per idle cycle', digits: 1 },
          { key: 'errorLinesExplained', header: 'error lines (by a fault)' },
          { key: 'errorLinesUnexplained', header: 'unexplained' },
          { key: 'samples', header: 'samples' },
        ],
        rows: serverRows,
        notes: [
          'steady RSS: median of the second half of the samples; slope: least squares over the second half, per hour.',
          'event-loop delay p99: the 99th percentile of the per-scrape p99 (prom-client monitorEventLoopDelay, reset at each scrape every 2 s).',
          'fees paid: lamports spent / 5000; must equal the landed transactions (with or without an error).',
          'idle cycle: RPC requests over crank cycles in 10 s with nothing pending (headers, windows, balances, history).',
        ],
      },
      {
        title: `/health at ${options.healthRate} requests/s for ${options.healthSeconds} s (autocannon, a separate process)`,
        columns: [
          { key: 'load', header: 'server state' },
          { key: 'requests', header: 'requests' },
          { key: 'errors', header: 'errors' },
          { key: 'p50Ms', header: 'p50 (ms)' },
          { key: 'p99Ms', header: 'p99 (ms)' },
          { key: 'maxMs', header: 'max (ms)' },
        ],
        rows: [healthRow('busy: traffic and faults, mid-run', busyHealth), healthRow('idle: after the drain', idleHealth)],
      },
    ],
    data: { servers: servers.map((server) => ({ index: server.index, samples: server.samples })), trafficErrors: input.trafficErrors.slice(0, 50) },
  };
}

function memoryFigures(samples: readonly ServerSample[]): { steadyMiB: number; peakMiB: number; slopeMiBPerHour: number } {
  const secondHalf = samples.slice(Math.floor(samples.length / 2));
  return {
    steadyMiB: percentile(secondHalf.map((sample) => sample.rssBytes / MIB), 50),
    peakMiB: Math.max(...samples.map((sample) => sample.rssBytes / MIB)),
    slopeMiBPerHour: slope(secondHalf.map((sample) => ({ x: sample.atMs / 3_600_000, y: sample.rssBytes / MIB }))),
  };
}

async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  for (let i = 0; i < count; i++) {
    ports.push(
      await new Promise<number>((resolve, reject) => {
        const probe = createServer();
        probe.once('error', reject);
        probe.listen(0, '127.0.0.1', () => {
          const { port } = probe.address() as { port: number };
          probe.close(() => resolve(port));
        });
      }),
    );
  }
  return ports;
}
