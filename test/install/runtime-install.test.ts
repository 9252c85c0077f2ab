import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerProcess, ensureBuilt } from '../support/server-process.js';

/**
 * The production install on a VM (docs/operating.md, "Installing on a VM"): a checkout's
 * package files, the dist/ a full install built and ui/, then `npm ci --omit=dev --omit=optional`
 * in a temporary directory, from npm's cache only (--offline: nothing but the files already on
 * this machine). It must build nothing, compile the PKCS#11 addon, carry no compiler, stay
 * quiet about engines on a tested Node and about install scripts, and start.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const INSTALL_TIMEOUT_MS = 120_000;
const START_TIMEOUT_MS = 10_000;
const OUTPUT_BYTES = 4 * 1024 * 1024;

const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };

/** The Node majors `engines` names (`^22.13.0 || ^24.0.0` -> 22, 24): the ones CI runs. */
function testedNodeMajors(): number[] {
  return [...packageJson.engines.node.matchAll(/\^(\d+)\./g)].map((match) => Number(match[1]));
}

/**
 * The running Node's own headers, so node-gyp compiles pkcs11js without downloading any
 * (as .ci/run does); undefined when this Node ships none.
 */
function nodeHeadersDir(): string | undefined {
  const prefix = dirname(dirname(process.execPath));
  return existsSync(join(prefix, 'include', 'node', 'node_api.h')) ? prefix : undefined;
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: OUTPUT_BYTES });
}

describe('npm ci --omit=dev --omit=optional in a checkout', () => {
  let dir: string;
  let install: SpawnSyncReturns<string>;

  beforeAll(() => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'bridge-install-'));
    for (const path of ['package.json', 'package-lock.json', 'scripts/prepare.mjs', 'dist', 'ui'])
      cpSync(join(ROOT, path), join(dir, path), { recursive: true });
    const headers = nodeHeadersDir();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...(headers === undefined ? {} : { npm_config_nodedir: headers }),
      // npm runs on the Node under test: the first `node` on PATH is this one.
      PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`,
    };
    install = run('npm', ['ci', '--omit=dev', '--omit=optional', '--offline', '--no-audit', '--no-fund'], dir, env, INSTALL_TIMEOUT_MS);
  }, INSTALL_TIMEOUT_MS + 30_000);

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('succeeds and builds nothing: prepare says so, and no dist-devnet/ appears', () => {
    expect(install.status, `${install.stdout}${install.stderr}`).toBe(0);
    expect(install.stdout).toContain('prepare: production install: nothing built');
    expect(existsSync(join(dir, 'dist-devnet'))).toBe(false);
  });

  it('warns about no install script: allowScripts covers every one', () => {
    expect(`${install.stdout}${install.stderr}`).not.toContain('allowScripts');
  });

  it.runIf(testedNodeMajors().includes(Number(process.versions.node.split('.')[0])))('warns about no engine on a tested Node', () => {
    expect(install.stderr).not.toContain('EBADENGINE');
  });

  it('carries no compiler', () => {
    expect(existsSync(join(dir, 'node_modules', 'typescript'))).toBe(false);
    expect(existsSync(join(dir, 'node_modules', '.bin', 'tsc'))).toBe(false);
  });

  it('builds the PKCS#11 addon that BRIDGE_AUTHORITY_KEYPAIR=pkcs11:... loads', () => {
    const load = run(process.execPath, ['-e', "require('pkcs11js')"], dir, process.env, START_TIMEOUT_MS);
    expect(load.status, load.stderr).toBe(0);
  });

  it('starts: node dist/index.js with a bad setting prints its one-line error and exits 1', () => {
    const env = { PATH: process.env['PATH'], BRIDGE_CRANK_MAX_ATTEMPTS: '0' };
    const start = run(process.execPath, ['dist/index.js'], dir, env, START_TIMEOUT_MS);
    expect(start.status).toBe(1);
    expect(start.stderr).toBe('BRIDGE_CRANK_MAX_ATTEMPTS: expected an integer 1..4294967295 (at least one attempt), got "0"\n');
  });

  // Each chunk, the signers' and the machine graph's included, which no start here loads.
  it('loads every chunk of the bundle (scripts/bundle-server.mjs) from this install alone', () => {
    const script =
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the child's script holds a template literal of its own
      "import { readdirSync } from 'node:fs'; for (const name of readdirSync('dist/chunks').filter((n) => n.endsWith('.js'))) await import(`./dist/chunks/${name}`);";
    const loaded = run(process.execPath, ['--input-type=module', '-e', script], dir, { PATH: process.env['PATH'] }, START_TIMEOUT_MS);
    expect(loaded.stderr).toBe('');
    expect(loaded.status).toBe(0);
  });

  // The bundle's chunks and the packages left out of it load from this install alone.
  it('serves /health with the crank configured, and the machine the crank page draws', async () => {
    const keypair = join(dir, 'authority.json');
    copyFileSync(join(ROOT, 'test/fixtures/authority-keypair.json'), keypair);
    chmodSync(keypair, 0o600);
    const server = new ServerProcess(
      {
        BRIDGE_SOURCE_RPC_URL: 'http://127.0.0.1:9',
        BRIDGE_TARGET_RPC_URL: 'http://127.0.0.1:9',
        BRIDGE_SOURCE_CHAIN_ID: '1',
        BRIDGE_TARGET_CHAIN_ID: '2',
        BRIDGE_AUTHORITY_KEYPAIR: keypair,
      },
      { root: dir },
    );
    try {
      const url = await server.listening();
      expect((await fetch(`${url}/health`, { signal: AbortSignal.timeout(START_TIMEOUT_MS) })).status).toBe(200);
      const machine = await fetch(`${url}/crank/machine`, { signal: AbortSignal.timeout(START_TIMEOUT_MS) });
      expect(machine.status).toBe(200);
      expect(await machine.json()).toMatchObject({
        root: { id: 'crank', states: expect.arrayContaining([expect.objectContaining({ key: 'idle' })]) },
      });
    } finally {
      await server.stop();
    }
  });
});
