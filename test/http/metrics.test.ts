import { spawnSync } from 'node:child_process';
import { Gauge } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { METRICS_ANSWERS_PER_SECOND, METRICS_RENDER_MAX_AGE_MS } from '../../src/http/metrics-render.js';
import { ControlledCrank } from '../support/controlled-crank.js';
import { startTestApp, type TestApp } from '../support/http-app.js';

let apps: TestApp[] = [];
afterEach(async () => {
  await Promise.all(apps.map((app) => app.close()));
  apps = [];
});

async function start(...args: Parameters<typeof startTestApp>): Promise<TestApp> {
  const app = await startTestApp(...args);
  apps.push(app);
  return app;
}

/** What a crank records, so the exposition holds labelled series and filled histograms. */
function recordSomeCrankActivity(app: TestApp): void {
  const { metrics } = app;
  metrics.crankCycles.inc({ outcome: 'ok' });
  metrics.crankCycleDuration.observe(12.5);
  metrics.crankSubmissions.inc({ action: 'ack_deposit', outcome: 'landed' });
  metrics.crankActionDuration.observe({ action: 'cleanup_deposit' }, 31);
  metrics.crankRetries.inc({ action: 'ack_withdraw' });
  metrics.crankPending.set({ action: 'ack_withdraw' }, 2);
  metrics.rpcDuration.observe({ chain: 'source', method: 'getMultipleAccounts' }, 0.04);
  metrics.rpcErrors.inc({ chain: 'target', method: 'sendTransaction', kind: 'timeout' });
}

const METRIC_NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABELS = '\\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\.)*",?)*\\}';
// Prometheus parses values with Go's ParseFloat: NaN and Inf in any case (prom-client writes "Nan").
const VALUE = '(?:[-+]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][-+]?\\d+)?|[nN][aA][nN]|[-+]?[iI][nN][fF])';
const HELP_LINE = new RegExp(`^# HELP (${METRIC_NAME}) .+$`);
const TYPE_LINE = new RegExp(`^# TYPE (${METRIC_NAME}) (counter|gauge|histogram|summary|untyped)$`);
const SAMPLE_LINE = new RegExp(`^(${METRIC_NAME})(${LABELS})? ${VALUE}(?: -?\\d+)?$`);

/** Checks Prometheus text format 0.0.4 line by line; returns each family's declared type. */
function parseExposition(text: string): Map<string, string> {
  const types = new Map<string, string>();
  expect(text.endsWith('\n')).toBe(true);
  for (const line of text.split('\n').filter((l) => l !== '')) {
    const type = TYPE_LINE.exec(line);
    if (type?.[1] !== undefined && type[2] !== undefined) {
      types.set(type[1], type[2]);
      continue;
    }
    if (HELP_LINE.test(line)) continue;
    const sample = SAMPLE_LINE.exec(line);
    expect(sample, `not an exposition line: ${line}`).not.toBeNull();
    const name = sample?.[1] ?? '';
    const family = [name, name.replace(/_(bucket|sum|count)$/, '')].find((candidate) => types.has(candidate));
    expect(family, `sample before its # TYPE line: ${line}`).toBeDefined();
  }
  return types;
}

describe('GET /metrics', () => {
  it('serves the exposition format with the registry content type', async () => {
    const app = await start();
    recordSomeCrankActivity(app);
    const res = await fetch(`${app.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(app.metrics.registry.contentType);
    expect(app.metrics.registry.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const types = parseExposition(await res.text());
    expect(types.get('bridge_crank_cycles_total')).toBe('counter');
    expect(types.get('bridge_crank_action_duration_seconds')).toBe('histogram');
    expect(types.get('process_cpu_seconds_total')).toBe('counter');
    expect(types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
  });

  it('exposes every declared metric with its help text, and the crank state', async () => {
    const app = await start();
    const text = await (await fetch(`${app.url}/metrics`)).text();
    const declared = Object.values(app.metrics).flatMap((m) => ('name' in m && typeof m.name === 'string' ? [m.name] : []));
    expect(declared.length).toBeGreaterThan(10);
    for (const name of declared) expect(text).toMatch(new RegExp(`^# HELP ${name} \\S`, 'm'));
    expect(text).toMatch(/^bridge_crank_enabled 0$/m);
  });

  it('shows what the crank records: labelled series and histogram buckets fit for tens of seconds', async () => {
    const app = await start({ crank: new ControlledCrank() });
    recordSomeCrankActivity(app);
    const text = await (await fetch(`${app.url}/metrics`)).text();
    expect(text).toContain('bridge_crank_submissions_total{action="ack_deposit",outcome="landed"} 1');
    expect(text).toContain('bridge_crank_action_duration_seconds_bucket{le="30",action="cleanup_deposit"} 0');
    expect(text).toContain('bridge_crank_action_duration_seconds_bucket{le="60",action="cleanup_deposit"} 1');
    expect(text).toContain('bridge_crank_action_duration_seconds_bucket{le="+Inf",action="cleanup_deposit"} 1');
  });

  it('keeps each app on its own registry, so that many apps live in one process', async () => {
    const first = await start();
    const second = await start();
    first.metrics.crankCycles.inc({ outcome: 'error' });
    expect(await (await fetch(`${first.url}/metrics`)).text()).toContain('bridge_crank_cycles_total{outcome="error"} 1');
    expect(await (await fetch(`${second.url}/metrics`)).text()).not.toContain('outcome="error"');
  });
});

describe('GET /metrics under a flood', () => {
  it(`renders the registry at most once a second and answers at most ${METRICS_ANSWERS_PER_SECOND} a second however many ask, and shows a change within that second`, async () => {
    const app = await start();
    let renders = 0;
    // Every render runs every collector once: this one counts them.
    new Gauge({
      name: 'test_metrics_renders',
      help: 'renders counted by the test',
      registers: [app.metrics.registry],
      collect: () => void renders++,
    });
    const FLOOD_MS = 2_500;
    const CONNECTIONS = 16;
    const startedAt = performance.now();
    let answered = 0;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() - startedAt < FLOOD_MS) {
          const res = await fetch(`${app.url}/metrics`);
          expect(res.status).toBe(200);
          await res.arrayBuffer();
          answered++;
        }
      }),
    );
    const seconds = (performance.now() - startedAt) / 1000;
    // Paced: one turn every 20 ms from the first; the turns reserved when the flood ended are answered after it.
    expect(answered).toBeLessThanOrEqual(METRICS_ANSWERS_PER_SECOND * seconds + CONNECTIONS);
    expect(answered).toBeGreaterThan((METRICS_ANSWERS_PER_SECOND * seconds) / 2);
    expect(renders).toBeGreaterThanOrEqual(2);
    expect(renders).toBeLessThanOrEqual(Math.ceil((seconds * 1000) / METRICS_RENDER_MAX_AGE_MS) + 1);

    app.metrics.crankCycles.inc({ outcome: 'error' });
    const setAt = performance.now();
    await expect
      .poll(async () => (await (await fetch(`${app.url}/metrics`)).text()).includes('bridge_crank_cycles_total{outcome="error"} 1'), {
        timeout: 3_000,
        interval: 50,
      })
      .toBe(true);
    expect(performance.now() - setAt).toBeLessThan(METRICS_RENDER_MAX_AGE_MS + 500);
  });
});

const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const promtoolInstalled = promtool.error === undefined && promtool.status === 0;

describe('promtool check metrics', () => {
  it.runIf(process.env.CI !== undefined)('is installed in CI (.ci/run installs the prometheus package)', () => {
    expect(promtoolInstalled, 'promtool is missing: CI must run `promtool check metrics`').toBe(true);
  });

  it.runIf(promtoolInstalled)("reports nothing on real output, prom-client's default metrics included", async () => {
    const app = await start({ crank: new ControlledCrank() });
    recordSomeCrankActivity(app);
    const text = await (await fetch(`${app.url}/metrics`)).text();
    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 20_000 });
    expect(`${check.stdout}${check.stderr}`).toBe('');
    expect(check.status).toBe(0);
    // The three gauges prom-client names *_total live on under *_all, with a value.
    for (const kind of ['handles', 'requests', 'resources']) {
      expect(text).not.toMatch(new RegExp(`^(# TYPE )?nodejs_active_${kind}_total`, 'm'));
      expect(text).toMatch(new RegExp(`^nodejs_active_${kind}_all \\d+$`, 'm'));
    }
  });
});
