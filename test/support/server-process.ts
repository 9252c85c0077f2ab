import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkLogLine } from './log-lines.js';

/**
 * The built server (`node dist/index.js`, what `npm start` runs) as a child process, for tests
 * of the process itself: startup errors, signals, POST /kill, what reaches stdout and stderr.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SRC = join(ROOT, 'src');
const DIST = join(ROOT, 'dist');
const DEVNET = join(ROOT, 'devnet');
const DIST_DEVNET = join(ROOT, 'dist-devnet');
const SERVER_ENTRY = join(DIST, 'index.js');
const BUNDLE_SERVER = join(ROOT, 'scripts', 'bundle-server.mjs');
export const DEVNET_CLI = join(DIST_DEVNET, 'devnet', 'cli.js');
export const DEMO = join(DIST_DEVNET, 'devnet', 'demo.js');

/**
 * Builds dist/ as `npm run build` does (scripts/bundle-server.mjs: the server's and the ops CLI's
 * bundles; the tests type-check nothing, vitest compiles src/ as it goes) unless the bundle is
 * newer than every source file, since it holds them all.
 */
export function ensureBuilt(): void {
  if (sourceFiles(SRC).every((source) => isNewer(SERVER_ENTRY, source))) return;
  run([BUNDLE_SERVER], 'node scripts/bundle-server.mjs');
}

/**
 * Builds dist-devnet/ (`npm run build:devnet`: devnet/ and the server code it imports, under
 * their own paths) unless every output is newer than its source.
 */
export function ensureDevnetBuilt(): void {
  const devnetCurrent = sourceFiles(DEVNET).every((source) => isNewer(join(DIST_DEVNET, relative(ROOT, source)), source));
  const importedCurrent = sourceFiles(SRC).every((source) => {
    const output = join(DIST_DEVNET, relative(ROOT, source)).replace(/\.ts$/, '.js');
    return !existsSync(output) || statSync(output).mtimeMs >= statSync(source).mtimeMs;
  });
  if (!devnetCurrent || !importedCurrent) build(join('devnet', 'tsconfig.json'));
}

function build(project: string): void {
  run([join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], `tsc -p ${project}`);
}

function run(args: string[], what: string): void {
  const result = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  if (result.status !== 0) throw new Error(`the build failed (${what}):\n${result.stdout}${result.stderr}`);
}

/** Whether the compiled output of `source` (at `outputPath`, .ts or .js) exists and is newer. */
function isNewer(outputPath: string, source: string): boolean {
  const output = outputPath.replace(/\.ts$/, '.js');
  return existsSync(output) && statSync(output).mtimeMs >= statSync(source).mtimeMs;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

export type LogRecord = Record<string, unknown>;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class ServerProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<Exit>;
  private stdoutText = '';
  private stderrText = '';
  private readonly records: LogRecord[] = [];
  private readonly events = new EventEmitter();

  /**
   * Starts the server with exactly `env` (plus PATH): nothing leaks in from the test's environment.
   * An env that names no address binds a free loopback port, never the default 0.0.0.0:8080,
   * which another test or program may hold. `root`: the package to run it from (default this
   * checkout), as a production install lays it out.
   */
  constructor(env: Record<string, string>, { root = ROOT }: { root?: string } = {}) {
    const bind = env['BRIDGE_BIND_ADDRESS'] === undefined && env['PORT'] === undefined ? { BRIDGE_BIND_ADDRESS: '127.0.0.1:0' } : {};
    this.child = spawn(process.execPath, [join(root, 'dist', 'index.js')], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...bind, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.exited = once(this.child, 'exit').then(([code, signal]) => ({ code, signal }) as Exit);
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => this.onStdout(chunk));
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderrText += chunk;
    });
  }

  stdout(): string {
    return this.stdoutText;
  }

  stderr(): string {
    return this.stderrText;
  }

  logs(): LogRecord[] {
    return [...this.records];
  }

  /** The first log record matching `predicate`, waiting up to `timeoutMs` for it. */
  async waitForLog(predicate: (record: LogRecord) => boolean, timeoutMs = 10_000): Promise<LogRecord> {
    const deadline = AbortSignal.timeout(timeoutMs);
    for (;;) {
      const found = this.records.find(predicate);
      if (found !== undefined) return found;
      if (this.child.exitCode !== null || this.child.signalCode !== null) throw this.failure('the server exited before the log line');
      if (deadline.aborted) throw this.failure(`no matching log line within ${timeoutMs} ms`);
      await this.nextEvent(deadline);
    }
  }

  /** Resolves on the next log record, the exit, or the deadline, whichever comes first. */
  private nextEvent(deadline: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.events.off('record', done);
        this.child.off('exit', done);
        deadline.removeEventListener('abort', done);
        resolve();
      };
      this.events.on('record', done);
      this.child.on('exit', done);
      deadline.addEventListener('abort', done);
    });
  }

  private failure(what: string): Error {
    return new Error(`${what}; stdout:\n${this.stdoutText}\nstderr:\n${this.stderrText}`);
  }

  /** Waits for the startup line and returns the base URL. */
  async listening(): Promise<string> {
    const started = await this.waitForLog((r) => r.msg === 'bridge server listening');
    return `http://127.0.0.1:${String(started.port)}`;
  }

  /** Kills the process if a test left it running. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  private onStdout(chunk: string): void {
    const start = this.stdoutText.lastIndexOf('\n') + 1;
    this.stdoutText += chunk;
    const complete = this.stdoutText.slice(start, this.stdoutText.lastIndexOf('\n') + 1);
    for (const line of complete.split('\n').filter((l) => l !== '')) {
      checkLogLine(line, 'the built server (ServerProcess)');
      this.records.push(parseLine(line));
      this.events.emit('record');
    }
  }
}

/** stdout must hold JSON lines only; anything else is kept visibly for the tests to refuse. */
function parseLine(line: string): LogRecord {
  try {
    return JSON.parse(line) as LogRecord;
  } catch {
    return { notJson: line };
  }
}
