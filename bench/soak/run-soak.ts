import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeTrackerHeader } from '../../src/chain/codec/accounts.js';
import { maxTrackerCapacity } from '../../src/chain/codec/layout.js';
import { startChainPair, type ChainPair } from '../../devnet/chain-pair.js';
import { serverEnv } from '../../devnet/server-env.js';
import { startTraffic } from '../../devnet/traffic.js';
import { bootstrapWorld, type World } from '../../devnet/world/bootstrap.js';
import { loadKeypairFile } from '../../devnet/world/keypair-files.js';
import type { ChainSide } from '../../src/domain.js';
import { sleep } from '../../src/time.js';
import type { BenchResult } from '../report.js';
import { authorityLamports } from './chain-checks.js';
import { startFaultSchedule, type SoakEndpoints } from './fault-schedule.js';
import { startGovernanceChanges } from './governance.js';
import { measureHealth, type HealthLatency } from './health-load.js';
import { sampleServer, type ServerSample } from './server-samples.js';
import { soakReport, type IdleCycleCost } from './soak-report.js';
import { watchVotes, type VoteWatch } from './vote-watch.js';
import { StageClock } from '../support/stage-latency.js';

/**
 * The soak (`npm run soak`): a devnet with pre-seeded trackers, bridge servers as separate
 * processes (the real dist/index.js) with a primary and a fallback endpoint per chain,
 * continuous traffic, RPC faults switching on and off; then a drain, the end-of-run checks and a report with the targets beside the measurements.
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
  /** Time between governance changes (reset_pending and set_token_pair, alternately). */
  governanceEveryMs: number;
  /** How long the idle cycles are counted after the drain (the servers poll every 2 s). */
  idleCyclesMs: number;
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
  governanceEveryMs: 120_000,
  idleCyclesMs: 10_000,
};

const SERVER_ENTRY = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'index.js');
const SAMPLE_INTERVAL_MS = 2_000;
const STARTUP_TIMEOUT_MS = 30_000;
const DRAIN_TIMEOUT_MS = 180_000;
/** The stage clock's sampling: each stage is seen at most this late (reads only the unsettled entries). */
const STAGE_SAMPLE_MS = 100;
const STOP_DEADLINE_MS = 10_000;

/**
 * Tracker entries the run needs: the seeded transfers plus every deposit its traffic can make
 * (the rate over the whole run, 10 % and 64 entries to spare). A tracker that fills mid-run
 * refuses deposits (TrackerFull) and leaves the rest of the run without new transfers, so a
 * run that cannot fit one DepositTracker (65,530 entries) is refused before it starts.
 */
export function soakCapacity(options: Pick<SoakOptions, 'seededEntries' | 'minutes' | 'depositsPerSecond'>): number {
  const traffic = trafficEntries(options);
  const needed = options.seededEntries + traffic;
  const max = maxTrackerCapacity('DepositTracker');
  if (traffic > max) {
    const longest = Math.floor(((max - 64) / 1.1 / options.depositsPerSecond / 60) * 10) / 10;
    throw new RangeError(
      `${options.minutes} min of deposits at ${options.depositsPerSecond}/s need room for ${traffic} tracker entries, above the ${max} a DepositTracker holds: ` +
        `run at most ${longest} min`,
    );
  }
  if (needed > max) {
    throw new RangeError(
      `--seeded ${options.seededEntries} plus ${options.minutes} min of deposits at ${options.depositsPerSecond}/s (room for ${traffic}) ` +
        `need ${needed} tracker entries, above the ${max} a DepositTracker holds: pass --seeded ${max - traffic} or less`,
    );
  }
  return needed;
}

/** The default seeded count: 60,000, or less when a long run needs the room for its own deposits. */
export function defaultSeededEntries(options: Pick<SoakOptions, 'minutes' | 'depositsPerSecond'>): number {
  return Math.max(0, Math.min(SOAK_DEFAULTS.seededEntries, maxTrackerCapacity('DepositTracker') - trafficEntries(options)));
}

function trafficEntries({ minutes, depositsPerSecond }: Pick<SoakOptions, 'minutes' | 'depositsPerSecond'>): number {
  return Math.ceil((depositsPerSecond * minutes * 60 * 11) / 10) + 64;
}

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
      capacity: soakCapacity(options),
      dir,
    });
    pair.seedSettledDeposits(options.seededEntries);
    const lamportsBefore = authorityLamports(pair, world);
    const votes = watchVotes(pair, world);
    const fallbacks = { source: await pair.source.addEndpoint(), target: await pair.target.addEndpoint() };
    const endpoints = { primaries: [pair.source.faults, pair.target.faults], fallbacks: [fallbacks.source.faults, fallbacks.target.faults] };
    const fallbackEnv = { BRIDGE_SOURCE_RPC_FALLBACK_URLS: fallbacks.source.url, BRIDGE_TARGET_RPC_FALLBACK_URLS: fallbacks.target.url };
    const ports = await freePorts(options.authorities);
    for (const [k, port] of ports.entries()) servers.push(spawnServer({ ...serverEnv(world, k, port), ...fallbackEnv }, k, port, dir));
    await Promise.all(servers.map((server) => waitForHealth(server, options.signal)));
    return await soak(pair, world, servers, { lamportsBefore, votes, endpoints }, options);
  } finally {
    await Promise.all(servers.map((server) => stopServer(server)));
    await pair.close();
    if (process.env['SOAK_KEEP_LOGS'] === undefined) await rm(dir, { recursive: true, force: true });
    else console.log(`server logs kept in ${dir}`);
  }
}

interface SoakSetup {
  lamportsBefore: bigint[];
  votes: VoteWatch;
  endpoints: SoakEndpoints;
}

async function soak(pair: ChainPair, world: World, servers: SoakServer[], setup: SoakSetup, options: SoakOptions): Promise<BenchResult> {
  const startedMs = Date.now();
  const durationMs = options.minutes * 60_000;
  const trafficErrors: string[] = [];
  const traffic = startTraffic(pair, world, {
    depositsPerSecond: options.depositsPerSecond,
    seed: 7,
    onError: (err) => trafficErrors.push(String(err)),
  });
  const faults = startFaultSchedule(setup.endpoints, options.faultPhaseMs);
  const governance = startGovernanceChanges(pair, world, await loadKeypairFile(world.governance.keypairPath), options.governanceEveryMs, (err) =>
    trafficErrors.push(`governance: ${String(err)}`),
  );
  const sampler = startSampling(servers, setup.votes);
  const stages = new StageClock({ pair, world });
  const stageTimer = setInterval(() => stages.sample(), STAGE_SAMPLE_MS);
  let busyHealth: HealthLatency | undefined;
  let drained: { settled: boolean; drainMs: number };
  try {
    // The busy measurement sits in the middle of the run, with traffic and faults going.
    await sleep(Math.max(0, durationMs / 2 - (options.healthSeconds * 1000) / 2), options.signal);
    busyHealth = await measureHealth(`${servers[0]!.origin}/health`, options.healthRate, options.healthSeconds);
    await sleep(Math.max(0, startedMs + durationMs - Date.now()), options.signal);
    faults.stop();
    await governance.stop();
    // Users keep claiming during the drain: a Confirmed transfer completes only once claimed.
    traffic.stopDeposits();
    drained = await drain(pair, world, options.signal);
    stages.sample();
  } finally {
    clearInterval(stageTimer);
    faults.stop();
    await governance.stop();
    await traffic.stop();
  }
  try {
    const idleHealth = await measureHealth(`${servers[0]!.origin}/health`, options.healthRate, options.healthSeconds);
    const idle = await idleCycleCost(servers, options.idleCyclesMs, options.signal);
    setup.votes.poll();
    sampler.stop();
    // The machine otherwise idle: no scrapes, the other servers stopped, only server 0's own idle cycles on the devnet.
    await Promise.all(servers.slice(1).map((server) => stopServer(server)));
    const aloneHealth = await measureHealth(`${servers[0]!.origin}/health`, options.healthRate, options.healthSeconds);
    setup.votes.poll();
    const health = { busy: busyHealth, idle: idleHealth, alone: aloneHealth };
    return soakReport({
      pair,
      world,
      servers,
      lamportsBefore: setup.lamportsBefore,
      landings: setup.votes.totals(),
      governance: setup.votes.governance(),
      options,
      injected: faults.injected(),
      traffic: traffic.stats(),
      trafficErrors,
      drained,
      health,
      idle,
      startedMs,
      latency: stages.latencies(),
    });
  } finally {
    sampler.stop();
  }
}

function spawnServer(env: Record<string, string>, k: number, port: number, dir: string): SoakServer {
  const logPath = join(dir, `server-${k}.log`);
  const log = openSync(logPath, 'a', 0o600);
  // e.g. SOAK_SERVER_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' to see what a busy server spends its time on.
  const nodeArgs = process.env['SOAK_SERVER_NODE_ARGS']?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, SERVER_ENTRY], { env: { ...process.env, ...env }, stdio: ['ignore', log, log] });
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

function startSampling(servers: SoakServer[], votes: VoteWatch): { stop(): void } {
  const startedMs = Date.now();
  const timer = setInterval(() => {
    votes.poll();
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

/**
 * RPC requests and account bytes per cycle while nothing is pending: the cost of an idle
 * authority. Both samples are taken just after a cycle ended, so the window holds whole cycles:
 * sampled at a fixed time, the end could fall inside a cycle and count its first reads against
 * the cycles before it (9 calls a cycle where the bound is 7, on a loaded machine).
 */
async function idleCycleCost(servers: SoakServer[], durationMs: number, signal: AbortSignal): Promise<IdleCycleCost[]> {
  const before = await Promise.all(servers.map((server) => sampleAfterCycle(server.origin, signal)));
  await sleep(durationMs, signal);
  const after = await Promise.all(servers.map((server) => sampleAfterCycle(server.origin, signal)));
  return servers.map((_, k) => {
    const cycles = (after[k]?.cycles ?? 0) - (before[k]?.cycles ?? 0);
    const perCycle = (chain: ChainSide) =>
      cycles > 0 ? ((after[k]?.rpcRequests[chain] ?? 0) - (before[k]?.rpcRequests[chain] ?? 0)) / cycles : Number.NaN;
    return {
      requestsPerCycle: { source: perCycle('source'), target: perCycle('target') },
      accountBytesPerRead: after[k]?.lastReadAccountBytes ?? { source: Number.NaN, target: Number.NaN },
    };
  });
}

/** How long sampleAfterCycle waits for a cycle to end: the soak servers' 2 s poll, several times over. */
const CYCLE_END_WAIT_MS = 15_000;
const CYCLE_END_POLL_MS = 50;

/** A /metrics sample from the first scrape that counts one more cycle than the scrape before it (the next cycle starts a poll interval later). */
async function sampleAfterCycle(origin: string, signal: AbortSignal): Promise<ServerSample | undefined> {
  const first = await sampleServer(`${origin}/metrics`, 0);
  const deadline = Date.now() + CYCLE_END_WAIT_MS;
  while (Date.now() < deadline) {
    await sleep(CYCLE_END_POLL_MS, signal);
    const now = await sampleServer(`${origin}/metrics`, 0);
    if (first === undefined || now === undefined || now.cycles > first.cycles) return now;
  }
  throw new Error(`${origin}: no crank cycle ended within ${CYCLE_END_WAIT_MS} ms while the idle cost was measured`);
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
