/**
 * /health and /metrics latency against the built server (`node dist/index.js`, crank disabled)
 * on 127.0.0.1: warm-up, then sequential requests, then concurrent clients, all bounded in
 * count and time. The client runs in this process on the same machine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { percentile, type Bench, type BenchResult, type Row } from './report.js';

const SERVER = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');
const ENDPOINTS = ['/health', '/metrics'] as const;
const WARMUP = 500;
const SEQUENTIAL = 5_000;
const CONCURRENT = 5_000;
const CLIENTS = 16;
const STARTUP_TIMEOUT_MS = 10_000;
const RUN_TIMEOUT_MS = 120_000;
const EXIT_TIMEOUT_MS = 10_000;

interface Server {
  origin: string;
  stop(): Promise<void>;
}

/** Starts dist/index.js on 127.0.0.1 and a free port, read from its "listening" log line. */
async function startServer(signal: AbortSignal): Promise<Server> {
  if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run npm run build first`);
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('BRIDGE_') && name !== 'PORT'));
  const child = spawn(process.execPath, [SERVER], {
    env: { ...env, BRIDGE_BIND_ADDRESS: '127.0.0.1:0', BRIDGE_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const port = await listeningPort(child, AbortSignal.any([signal, AbortSignal.timeout(STARTUP_TIMEOUT_MS)]));
    child.stdout!.resume();
    return { origin: `http://127.0.0.1:${port}`, stop: () => stopServer(child, exited) };
  } catch (err) {
    await stopServer(child, exited);
    throw err;
  }
}

async function listeningPort(child: ChildProcess, signal: AbortSignal): Promise<number> {
  const lines = createInterface({ input: child.stdout! });
  const onAbort = () => lines.close();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    for await (const line of lines) {
      const record = JSON.parse(line) as { msg?: string; port?: number };
      if (record.msg === 'bridge server listening' && typeof record.port === 'number') return record.port;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
  throw new Error(`dist/index.js did not log "bridge server listening" (${signal.aborted ? 'timed out' : 'exited'})`);
}

async function stopServer(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

// No AbortSignal per request (fetch keeps a listener per request on a shared signal): the loops
// check the signal between requests, and an abort stops the server, which ends one in flight.
async function request(url: string, signal: AbortSignal): Promise<number> {
  signal.throwIfAborted();
  const begin = performance.now();
  const response = await fetch(url);
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`GET ${url} answered ${response.status}`);
  return performance.now() - begin;
}

async function sequential(url: string, count: number, signal: AbortSignal): Promise<number[]> {
  const durations: number[] = [];
  for (let i = 0; i < count; i++) durations.push(await request(url, signal));
  return durations;
}

/** `count` requests shared by `clients` loops; returns requests per second. */
async function concurrent(url: string, count: number, clients: number, signal: AbortSignal): Promise<number> {
  let remaining = count;
  const begin = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (remaining > 0) {
        remaining -= 1;
        await request(url, signal);
      }
    }),
  );
  return count / ((performance.now() - begin) / 1000);
}

async function residentMiB(origin: string): Promise<number> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith('process_resident_memory_bytes '));
  return line === undefined ? Number.NaN : Number(line.split(' ')[1]) / 1_048_576;
}

async function run(signal: AbortSignal): Promise<BenchResult> {
  const bounded = AbortSignal.any([signal, AbortSignal.timeout(RUN_TIMEOUT_MS)]);
  const server = await startServer(bounded);
  const stopOnAbort = () => void server.stop();
  bounded.addEventListener('abort', stopOnAbort, { once: true });
  const rows: Row[] = [];
  let rssMiB: number;
  try {
    for (const endpoint of ENDPOINTS) {
      const url = `${server.origin}${endpoint}`;
      await sequential(url, WARMUP, bounded);
      const durations = await sequential(url, SEQUENTIAL, bounded);
      const perSecond = await concurrent(url, CONCURRENT, CLIENTS, bounded);
      rows.push({
        node: process.version,
        endpoint,
        p50: percentile(durations, 50),
        p99: percentile(durations, 99),
        max: Math.max(...durations),
        perSecond,
      });
    }
    rssMiB = await residentMiB(server.origin);
  } finally {
    bounded.removeEventListener('abort', stopOnAbort);
    await server.stop();
  }
  return {
    name: 'http',
    parameters: { warmup: WARMUP, sequential: SEQUENTIAL, concurrent: CONCURRENT, clients: CLIENTS },
    failures: [],
    tables: [
      {
        title: `/health and /metrics on 127.0.0.1 (crank disabled; ${SEQUENTIAL} sequential requests, then ${CONCURRENT} from ${CLIENTS} clients)`,
        columns: [
          { key: 'node', header: 'Node' },
          { key: 'endpoint', header: 'endpoint' },
          { key: 'p50', header: 'p50 (ms)', digits: 2 },
          { key: 'p99', header: 'p99 (ms)', digits: 2 },
          { key: 'max', header: 'max (ms)', digits: 1 },
          { key: 'perSecond', header: `${CLIENTS} clients (req/s)`, digits: 0 },
        ],
        rows,
        notes: [
          `Latency: one fetch() from request to last body byte, sequential, after ${WARMUP} warm-up requests. The server is node dist/index.js run by this Node (${process.version}); the client shares the machine.`,
          `Server resident memory after the run: ${rssMiB.toFixed(0)} MiB (process_resident_memory_bytes).`,
        ],
      },
    ],
  };
}

export const httpBench: Bench = {
  name: 'http',
  description: '/health and /metrics latency against node dist/index.js on loopback',
  run,
};
