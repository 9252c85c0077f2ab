import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/**
 * The built server (`node dist/index.js`) as a bench runs it: on 127.0.0.1 and a free port,
 * read from its "listening" log line, with the given variables and none of this process's
 * BRIDGE_* or PORT.
 */

const SERVER = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'index.js');
const STARTUP_TIMEOUT_MS = 10_000;
const EXIT_TIMEOUT_MS = 10_000;

export interface BuiltServer {
  origin: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startBuiltServer(env: Record<string, string>, signal: AbortSignal): Promise<BuiltServer> {
  if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run npm run build first`);
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('BRIDGE_') && name !== 'PORT'));
  const child = spawn(process.execPath, [SERVER], {
    env: { ...inherited, BRIDGE_BIND_ADDRESS: '127.0.0.1:0', BRIDGE_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const port = await listeningPort(child, AbortSignal.any([signal, AbortSignal.timeout(STARTUP_TIMEOUT_MS)]));
    child.stdout!.resume();
    return { origin: `http://127.0.0.1:${port}`, pid: child.pid!, stop: () => stopServer(child, exited) };
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
