import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, DEVNET_CLI as CLI, ensureBuilt, ensureDevnetBuilt } from '../support/server-process.js';
import { rpc } from './rpc/helpers.js';

/**
 * The commands as processes, from the compiled output (dist-devnet/ and dist/, rebuilt here when
 * older than the sources they run): strict flag errors, and a clean exit 0 on SIGINT.
 */

let dir: string;

beforeAll(async () => {
  // The demo starts real servers: it needs dist/ as much as dist-devnet/.
  ensureBuilt();
  ensureDevnetBuilt();
  expect(existsSync(CLI)).toBe(true);
  dir = await mkdtemp(join(tmpdir(), 'devnet-cli-'));
}, 120_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function run(script: string, args: string[]): { status: number | null; stderr: string } {
  const result = spawnSync(process.execPath, [script, ...args], { encoding: 'utf8', timeout: 10_000 });
  return { status: result.status, stderr: result.stderr };
}

describe('flag errors as processes (the parsing itself: cli-args.test.ts)', () => {
  it('npm run devnet: an out-of-range value exits 2 naming the flag', () => {
    const { status, stderr } = run(CLI, ['--authorities', '0']);
    expect(status).toBe(2);
    expect(stderr).toContain('--authorities must be an integer from 1 to 16, got "0"');
  });

  it('npm run demo: an unknown flag exits 2 naming it', () => {
    const { status, stderr } = run(DEMO, ['--servers', '3']);
    expect(status).toBe(2);
    expect(stderr).toContain("'--servers'");
  });
});

describe('npm run devnet: lifecycle', () => {
  it('boots (with a cost scale, a price floor and Agave-like banks at 50 ms slots), writes world.json, prints the server environment, and exits 0 on SIGINT', async () => {
    const args = [
      '--source-port',
      '0',
      '--target-port',
      '0',
      '--dir',
      dir,
      '--authorities',
      '2',
      '--compute-cost-scale',
      '6',
      '--price-floor',
      '20000',
      '--slot-interval-ms',
      '50',
    ];
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const deadline = Date.now() + 15_000;
    while (!stdout.includes('Press Ctrl-C') && Date.now() < deadline && child.exitCode === null) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(stdout).toContain('Press Ctrl-C');
    expect(stdout).toContain(`BRIDGE_AUTHORITY_KEYPAIR=${join(dir, 'authority-1.json')}`);
    const world = JSON.parse(await readFile(join(dir, 'world.json'), 'utf8')) as { source: { rpcUrl: string } };
    expect(stdout).toContain(`BRIDGE_SOURCE_RPC_URL=${world.source.rpcUrl}`);
    expect(stdout).toContain('Congestion: transactions bidding under 20000 micro-lamports per compute unit do not land.');
    expect(stdout).toContain('Commitments: confirmed 2 and finalized 32 slots behind the head');
    const admin = async (method: string) => (await rpc(world.source.rpcUrl, method)).body.result;
    expect(await admin('devnet_getComputeCosts')).toMatchObject({ scale: 6, units: { ack_deposit: 144_000 } });
    expect(await admin('devnet_getFaults')).toMatchObject({ priceFloor: 20_000 });
    // The bridge is there for a server reading at finalized (the default) as soon as this prints.
    const tracker = (
      await rpc(world.source.rpcUrl, 'getAccountInfo', [
        (world as unknown as { source: { depositTracker: string } }).source.depositTracker,
        { encoding: 'base64' },
      ])
    ).body.result;
    expect(tracker.value).not.toBeNull();
    child.kill('SIGINT');
    const code = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('timeout'), 10_000))]);
    expect(code).toBe(0);
    expect(stdout).toContain('devnet stopped');
  }, 30_000);
});
