/**
 * /health and /metrics latency against the built server (`node dist/index.js`, crank disabled)
 * on 127.0.0.1: warm-up, then sequential requests, then concurrent clients, all bounded in
 * count and time. The client runs in this process on the same machine.
 */
import { percentile, type Bench, type BenchResult, type Row } from './report.js';
import { startBuiltServer } from './support/built-server.js';

const ENDPOINTS = ['/health', '/metrics'] as const;
const WARMUP = 500;
const SEQUENTIAL = 5_000;
const CONCURRENT = 5_000;
const CLIENTS = 16;
const RUN_TIMEOUT_MS = 120_000;

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
  const server = await startBuiltServer({}, bounded);
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
