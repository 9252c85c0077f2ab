import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { ops } from '../ops/ops-cli.js';
import { FIXTURE_PUBLIC_KEY } from '../support/keypair-files.js';
import { ensureBuilt } from '../support/server-process.js';
import { waitFor } from '../support/wait-for.js';

/**
 * docs/key-custody.md's rehearsal as an operator runs it: `npm run rehearse:key-services` starts
 * the tests' fakes of AWS KMS, Cloud KMS and Vault transit (Vault over https with --tls) on
 * loopback, signing as the given keypair file, and prints one block of variables per service;
 * `npm run ops -- signer` with each block prints the keypair's public key, a fault typed on stdin
 * makes it fail with its one line, and Ctrl-C stops it, leaving no file behind.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = 'test/fixtures/authority-keypair.json';
const START_TIMEOUT_MS = 30_000;

let child: ChildProcess | undefined;
afterEach(() => {
  // Its own process group (npm, its shell, tsx, node), ended whole.
  if (child?.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
});

beforeAll(() => {
  ensureBuilt();
}, 120_000);

/** The `export NAME='value'` lines of each `# <service> at <url>` block. */
function blocks(stdout: string): Map<string, Record<string, string>> {
  const found = new Map<string, Record<string, string>>();
  for (const block of stdout.split('\n\n')) {
    const service = /^# ([a-z-]+) at /.exec(block)?.[1];
    if (service === undefined) continue;
    found.set(service, Object.fromEntries([...block.matchAll(/^export ([A-Z0-9_]+)='([^']*)'$/gm)].map((match) => [match[1]!, match[2]!])));
  }
  return found;
}

it('starts the three fakes, prints the variables that point ops and the server at each, takes faults on stdin, stops on Ctrl-C', async () => {
  let stdout = '';
  const rehearsal = spawn('npm', ['run', '--silent', 'rehearse:key-services', '--', '--keypair', FIXTURE, '--tls'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? ROOT },
    detached: true,
  });
  child = rehearsal;
  rehearsal.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  const exited = new Promise<string>((resolve) => rehearsal.on('exit', (code, signal) => resolve(signal ?? String(code))));
  await waitFor(() => stdout.includes('Ctrl-C stops.'), { timeoutMs: START_TIMEOUT_MS, what: 'the rehearsal to print its variables' });
  expect(stdout).toContain(`# The three fakes sign as ${FIXTURE_PUBLIC_KEY}.`);

  const envs = blocks(stdout);
  expect([...envs.keys()]).toEqual(['aws-kms', 'gcp-kms', 'vault-transit']);
  expect(envs.get('vault-transit')).toMatchObject({
    VAULT_ADDR: expect.stringMatching(/^https:\/\/127\.0\.0\.1:\d+$/),
    VAULT_CACERT: expect.any(String),
  });
  for (const [service, env] of envs) {
    const printed = await ops(['signer'], env);
    expect(printed, service).toMatchObject({ code: 0, stdout: expect.stringMatching(new RegExp(`^${FIXTURE_PUBLIC_KEY}\\n`)) });
  }

  rehearsal.stdin!.write('vault-transit denied\n');
  await waitFor(() => stdout.includes('vault-transit: denied'), { timeoutMs: 5_000, what: 'the fault to be switched on' });
  const denied = await ops(['signer'], envs.get('vault-transit')!);
  expect(denied.code).toBe(1);
  expect(denied.stderr).toMatch(
    /^ops: BRIDGE_AUTHORITY_KEYPAIR: Vault transit: GET \/v1\/transit\/keys\/bridge-authority answered 403 .*"read" on transit\/keys\/bridge-authority/,
  );

  // Ctrl-C: SIGINT to the terminal's foreground process group. npm itself ends by the signal.
  process.kill(-rehearsal.pid!, 'SIGINT');
  expect(await exited).toBe('SIGINT');
  const left = [envs.get('vault-transit')!['VAULT_CACERT']!, envs.get('gcp-kms')!['GOOGLE_APPLICATION_CREDENTIALS']!];
  await waitFor(() => left.every((path) => !existsSync(path)), { timeoutMs: 5_000, what: 'the fakes to remove their files' });
}, 90_000);
