import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { serverEnv } from './server-env.js';
import type { World } from './world/bootstrap.js';

/**
 * The demo's bridge servers: `node dist/index.js` per authority, each in its own process group
 * (so a terminal Ctrl-C reaches only the demo, which stops them in order), stdout and stderr
 * appended to DIR/server-<k>.log.
 */

export interface DemoServer {
  index: number;
  healthUrl: string;
  logPath: string;
  child: ChildProcess;
  exited: Promise<number | null>;
}

export function spawnServers(
  entry: string,
  world: World,
  firstPort: number,
  onExit: (server: DemoServer, code: number | null) => void,
  extraEnv: Record<string, string> = {},
): DemoServer[] {
  return world.authorities.map((_, k) => {
    const port = firstPort + k;
    const logPath = join(world.dir, `server-${k}.log`);
    const log = openSync(logPath, 'a', 0o600);
    const child = spawn(process.execPath, [entry], {
      env: { ...process.env, ...serverEnv(world, k, port), ...extraEnv },
      stdio: ['ignore', log, log],
      detached: true,
    });
    closeSync(log);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const server: DemoServer = { index: k, healthUrl: `http://127.0.0.1:${port}/health`, logPath, child, exited };
    void exited.then((code) => onExit(server, code));
    return server;
  });
}

/** SIGTERM to every server still running; SIGKILL to any still running after `deadlineMs`. */
export async function stopServers(servers: DemoServer[], deadlineMs: number): Promise<void> {
  const running = servers.filter((server) => server.child.exitCode === null && server.child.signalCode === null);
  for (const server of running) server.child.kill('SIGTERM');
  await Promise.all(
    running.map(async (server) => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), deadlineMs);
      });
      const outcome = await Promise.race([server.exited, deadline]);
      clearTimeout(timer);
      if (outcome === 'late') {
        server.child.kill('SIGKILL');
        await server.exited;
      }
    }),
  );
}

/** Last resort when the demo itself exits abnormally: no server outlives it. */
export function killServersNow(servers: DemoServer[]): void {
  for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
}
