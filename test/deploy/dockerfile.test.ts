import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ControlledCrank } from '../support/controlled-crank.js';
import { startTestApp, type TestApp } from '../support/http-app.js';

/**
 * The Dockerfile where no Docker engine runs the image: base images pinned by digest, and its
 * HEALTHCHECK's script run as the image runs it (node -e, the port from BRIDGE_BIND_ADDRESS or
 * PORT) against a real server: healthy on 200 (ok and degraded), unhealthy on 503 (stalled) and
 * when nothing answers. docs/operating.md ("Deployment") has the runtime stage checked by hand.
 */

const DOCKERFILE = readFileSync(fileURLToPath(new URL('../../Dockerfile', import.meta.url)), 'utf8');

/** The HEALTHCHECK's `node -e` script, from its exec-form CMD. */
function healthcheckScript(): string {
  const command = /^HEALTHCHECK [^\n]*\\\n\s+CMD (\[.*\])$/m.exec(DOCKERFILE)?.[1];
  expect(command, 'a HEALTHCHECK with an exec-form CMD').toBeDefined();
  const [program, flag, script] = JSON.parse(command!) as string[];
  expect([program, flag]).toEqual(['node', '-e']);
  return script!;
}

function runHealthcheck(env: Record<string, string>): Promise<number | null> {
  const child = spawn(process.execPath, ['-e', healthcheckScript()], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'ignore' });
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('Dockerfile', () => {
  it('pins every base image by digest', () => {
    const froms = [...DOCKERFILE.matchAll(/^FROM (\S+)/gm)].map((match) => match[1]);
    expect(froms).toEqual([
      expect.stringMatching(/^node:24-bookworm@sha256:[0-9a-f]{64}$/),
      expect.stringMatching(/^node:24-bookworm-slim@sha256:[0-9a-f]{64}$/),
    ]);
  });

  it('HEALTHCHECK: healthy while /health answers 200 (ok, degraded), unhealthy on 503 (stalled) and when nothing answers', async () => {
    const crank = new ControlledCrank();
    app = await startTestApp({ crank });
    const bind = { BRIDGE_BIND_ADDRESS: `127.0.0.1:${app.port}` };
    expect(await runHealthcheck(bind)).toBe(0);
    expect(await runHealthcheck({ PORT: String(app.port) })).toBe(0);
    crank.healthStatus = 'degraded';
    expect(await runHealthcheck(bind)).toBe(0);
    crank.healthStatus = 'stalled';
    expect(await runHealthcheck(bind)).toBe(1);
    await app.close();
    app = undefined;
    expect(await runHealthcheck(bind)).toBe(1);
  });
});
