import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

/**
 * /health at a fixed request rate from a separate process (autocannon), so that the load
 * generator does not share the measured server's event loop nor this process's.
 */

export interface HealthLatency {
  requests: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
const CONNECTIONS = 10;

export async function measureHealth(url: string, rate: number, seconds: number): Promise<HealthLatency> {
  const args = [AUTOCANNON, '--json', '--connections', String(CONNECTIONS), '--overallRate', String(rate), '--duration', String(seconds), url];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'], timeout: (seconds + 30) * 1000 });
  let output = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    output += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error(`autocannon exited with ${code} against ${url}`);
  const result = JSON.parse(output) as {
    requests: { total: number };
    errors: number;
    non2xx: number;
    latency: { p50: number; p99: number; max: number };
  };
  return {
    requests: result.requests.total,
    errors: result.errors + result.non2xx,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
  };
}
