import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/metrics.js';
import { bridgeView, deposits } from '../machines/support/bridge-view.js';
import { startTestCrank } from '../machines/support/test-crank.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The shipped rules in the real Prometheus server (the Debian package .ci/run installs), at the
 * wall clock, which promtool's unit tests cannot use (their clock starts at 0): a crank
 * restarted whose first cycle still runs fires no alert, where a last-cycle gauge at 0 (what
 * the server exported before) puts BridgeCrankStalled pending at the first evaluation. Scrapes
 * and evaluations every second; the test waits for the control's alert, so it cannot pass
 * without the rules having been evaluated on both targets.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const STARTUP_TIMEOUT_MS = 30_000;
const installed = spawnSync('prometheus', ['--version'], { encoding: 'utf8' }).status === 0;

function serve(registry: Registry): Promise<Server> {
  const server = createServer((_, response) => {
    void registry.metrics().then((text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function portOf(server: Server): number {
  return (server.address() as AddressInfo).port;
}

/** A port free right now on loopback, for Prometheus' own listener (it takes no port 0). */
function freePort(): Promise<number> {
  const probe = createNetServer();
  return new Promise((resolve) =>
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    }),
  );
}

interface ActiveAlert {
  labels: Record<string, string>;
  state: string;
}

describe.runIf(installed)('the real Prometheus server on deploy/prometheus/alerts.yml', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prometheus-rules-'));
  const servers: Server[] = [];
  let prometheus: ChildProcess | undefined;
  let api = '';
  let restarted: ReturnType<typeof startTestCrank> | undefined;

  beforeAll(async () => {
    // The restarted crank: its first read waits (until the test stops it), so no cycle has finished.
    restarted = startTestCrank(bridgeView({ deposits: deposits(2), withdrawals: [] }), {
      before: (chains) => {
        chains.script(
          'readState',
          (call) => new Promise<never>((_, reject) => call.signal.addEventListener('abort', () => reject(call.signal.reason as Error))),
        );
      },
    });
    // The control: what the server exported before, a last-cycle gauge at 0 from the start.
    const zero = createMetrics(new Registry());
    zero.crankEnabled.set(1);
    zero.crankLastCycleFinished.set(0);
    const [restartedTarget, zeroTarget] = await Promise.all([serve(restarted.metrics.registry), serve(zero.registry)]);
    servers.push(restartedTarget!, zeroTarget!);
    const port = await freePort();
    api = `http://127.0.0.1:${port}/api/v1`;
    copyFileSync(`${ROOT}deploy/prometheus/alerts.yml`, join(dir, 'alerts.yml'));
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        'rule_files: [alerts.yml]',
        'scrape_configs:',
        '  - job_name: bridge',
        '    static_configs:',
        `      - targets: ['127.0.0.1:${portOf(restartedTarget!)}']`,
        '        labels: { authority: restarted }',
        `      - targets: ['127.0.0.1:${portOf(zeroTarget!)}']`,
        '        labels: { authority: zero }',
        '',
      ].join('\n'),
    );
    prometheus = spawn(
      'prometheus',
      [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
      { stdio: 'ignore' },
    );
  }, STARTUP_TIMEOUT_MS);

  afterAll(async () => {
    prometheus?.kill('SIGTERM');
    await restarted?.crank.stop(0);
    for (const server of servers) server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function alerts(): Promise<ActiveAlert[]> {
    const response = await fetch(`${api}/alerts`).catch(() => undefined);
    if (response?.ok !== true) return [];
    return ((await response.json()) as { data: { alerts: ActiveAlert[] } }).data.alerts;
  }

  it(
    'a restart whose first cycle still runs fires nothing; a last-cycle gauge at 0 would',
    async () => {
      const zeroStalled = (list: ActiveAlert[]) =>
        list.some((alert) => alert.labels['alertname'] === 'BridgeCrankStalled' && alert.labels['authority'] === 'zero');
      await waitFor(async () => zeroStalled(await alerts()), {
        timeoutMs: STARTUP_TIMEOUT_MS,
        what: "the control target's BridgeCrankStalled",
        intervalMs: 250,
      });
      // A few more evaluations at 1 s, each with both targets scraped.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const now = await alerts();
      expect(zeroStalled(now)).toBe(true);
      expect(now.filter((alert) => alert.labels['authority'] === 'restarted')).toEqual([]);
      const scraped = (await (await fetch(`${api}/query?query=${encodeURIComponent('bridge_crank_enabled{authority="restarted"}')}`)).json()) as {
        data: { result: unknown[] };
      };
      expect(scraped.data.result).toHaveLength(1);
    },
    STARTUP_TIMEOUT_MS + 10_000,
  );
});
