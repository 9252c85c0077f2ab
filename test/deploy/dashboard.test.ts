import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverEnv } from '../../devnet/server-env.js';
import { startDevnetBridge, type DevnetBridge } from '../integration/support/devnet-bridge.js';
import { LEASE_STATUSES } from '../../src/machines/lease.js';
import { alertRules } from '../support/alert-rules.js';
import { waitFor } from '../support/wait-for.js';
import { familyOf, metricNamesIn } from '../support/promql.js';
import { ServerProcess, ensureBuilt } from '../support/server-process.js';

/**
 * deploy/grafana/bridge-dashboard.json against a live server: `node dist/index.js` with the
 * crank enabled against the devnet must expose every metric any panel queries (a `# TYPE`
 * line; histograms through their _bucket, _sum and _count samples), and a freshly started one
 * a sample of every series a panel or an alert (deploy/prometheus/alerts.yml) reads: labelled
 * counters at 0 from the first scrape, everything else once the first cycle finished.
 */

const DASHBOARD = fileURLToPath(new URL('../../deploy/grafana/bridge-dashboard.json', import.meta.url));
const ALERTS = fileURLToPath(new URL('../../deploy/prometheus/alerts.yml', import.meta.url));
const FIRST_CYCLE_TIMEOUT_MS = 20_000;

interface Steps {
  steps: { color: string; value: number | null }[];
}

interface FieldDefaults {
  unit?: string;
  mappings?: { type: string; options: Record<string, { text: string; color: string }> }[];
  thresholds?: Steps;
}

interface Panel {
  id: number;
  type: string;
  title: string;
  targets?: { expr: string; datasource: { uid: string } }[];
  fieldConfig?: { defaults: FieldDefaults };
}

const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { uid: string; panels: Panel[] };
const queryPanels = dashboard.panels.filter((panel) => panel.type !== 'row');
const expressions = queryPanels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })));

describe('deploy/grafana/bridge-dashboard.json', () => {
  it('has one query at least per panel, unique panel ids, and the data source chosen at import', () => {
    for (const panel of queryPanels) {
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's own variable syntax, not a template literal
      for (const target of panel.targets ?? []) expect(target.datasource.uid, panel.title).toBe('${datasource}');
    }
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('shows what an operator needs: cycles, pending work, how long it waits, actions, health, balances, RPC endpoints, second signers, fees and compute', () => {
    const queried = new Set(expressions.flatMap(({ expr }) => metricNamesIn(expr)));
    for (const name of [
      'bridge_crank_cycles_total',
      'bridge_crank_pending_entries',
      'bridge_crank_action_duration_seconds_bucket',
      'bridge_health_status',
      'bridge_authority_balance_lamports',
      'bridge_authority_min_balance_lamports',
      'bridge_rpc_errors_total',
      'bridge_rpc_retries_total',
      'bridge_rpc_endpoint_up',
      'bridge_rpc_endpoint_slot',
      'bridge_foreign_signatures_total',
      'bridge_oldest_pending_age_seconds',
      'bridge_transfer_wait_alert_seconds',
      'bridge_vote_latency_seconds_bucket',
      'bridge_transfer_latency_seconds_bucket',
      'bridge_priority_fee_microlamports',
      'bridge_priority_fee_max_microlamports',
      'bridge_fees_paid_lamports_total',
      'bridge_compute_units_total',
      'bridge_crank_poll_interval_seconds',
      'bridge_crank_standby_seconds',
      'bridge_crank_standby_window_seconds',
      'bridge_chain_landing_mode',
      'bridge_landing_slots_bucket',
      'bridge_landing_outcomes_total',
      'bridge_send_path_sends_total',
      'bridge_send_path_landed_total',
      'bridge_crank_lease',
      'bridge_rpc_slot_floor',
      'bridge_rpc_slot_outliers_total',
      'bridge_signer_evidence_unverified_total',
    ]) {
      expect(queried.has(name), `no panel queries ${name}`).toBe(true);
    }
  });
});

describe('what the dashboard shows an incident as', () => {
  const panel = (title: string): Panel => {
    const found = dashboard.panels.find((candidate) => candidate.title === title);
    expect(found, title).toBeDefined();
    return found!;
  };
  const mapped = (defaults: FieldDefaults | undefined) =>
    Object.fromEntries(Object.entries(defaults?.mappings?.[0]?.options ?? {}).map(([value, { text, color }]) => [value, `${text} ${color}`]));

  it('maps the health status to words and colours: ok green, degraded orange, stalled red', () => {
    const health = panel('Health status');
    expect(health.targets?.[0]?.expr).toMatch(/status="degraded"\}\) \+ 2 \* max by \(instance\) \(bridge_health_status\{.*status="stalled"\}\)/);
    expect(mapped(health.fieldConfig?.defaults)).toEqual({ '0': 'ok green', '1': 'degraded orange', '2': 'stalled red' });
    expect(health.fieldConfig?.defaults.thresholds?.steps).toEqual([
      { color: 'green', value: null },
      { color: 'orange', value: 1 },
      { color: 'red', value: 2 },
    ]);
  });

  it('reads the ages of cycles against the poll interval: green under 2 intervals, orange from 2, red from 40', () => {
    for (const title of ['Since the last finished cycle (poll intervals)', 'Since the last cycle start (poll intervals) / successful action']) {
      const age = panel(title);
      expect(age.targets?.[0]?.expr, title).toMatch(
        /^\(time\(\) - bridge_crank_last_\w+_timestamp_seconds\{.*\}\) \/ on \(job, instance\) bridge_crank_poll_interval_seconds\{/,
      );
      expect(age.fieldConfig?.defaults.thresholds?.steps, title).toEqual([
        { color: 'green', value: null },
        { color: 'orange', value: 2 },
        { color: 'red', value: 40 },
      ]);
    }
  });

  it('shows how long work has waited with nothing landed, red from where BridgeVotesNotLanding starts counting, "nothing waits" when absent', () => {
    const waiting = panel('Work waiting, nothing landed');
    expect(waiting.targets?.[0]?.expr).toMatch(/^time\(\) - bridge_crank_unlanded_since_timestamp_seconds\{/);
    const threshold = /> (\d+)$/.exec(rules.find((rule) => rule.name === 'BridgeVotesNotLanding')!.expr.trim())![1];
    expect(waiting.fieldConfig?.defaults.thresholds?.steps.at(-1)).toEqual({ color: 'red', value: Number(threshold) });
    expect((waiting.fieldConfig?.defaults as { noValue?: string } | undefined)?.noValue).toBe('nothing waits');
  });

  it('shows the endpoints and the roles as words over time, not a line between 0 and 1', () => {
    const endpoints = panel('Endpoint up');
    expect(endpoints.type).toBe('state-timeline');
    expect(mapped(endpoints.fieldConfig?.defaults)).toEqual({ '0': 'out red', '1': 'up green' });
    const role = panel('Role by instance');
    expect(role.type).toBe('state-timeline');
    expect(role.targets?.[0]?.expr).toContain('role="active"');
    expect(mapped(role.fieldConfig?.defaults)).toEqual({ '0': 'standby blue', '1': 'active green' });
  });

  it('maps the landing mode: nonce green, blockhash orange', () => {
    expect(mapped(panel('Landing mode').fieldConfig?.defaults)).toEqual({ '0': 'blockhash orange', '1': 'nonce green' });
  });

  it('maps the signing lease: held green, released, waiting and unknown orange, taken and unusable red, off blue; each status its own number', () => {
    const lease = panel('Signing lease');
    const expr = lease.targets?.[0]?.expr ?? '';
    const numbered = Object.fromEntries(
      [...expr.matchAll(/(\d+) \* bridge_crank_lease\{[^}]*status="(\w+)"\}/g)].map(([, value = '', status = '']) => [value, status]),
    );
    expect(numbered).toEqual({ '1': 'held', '2': 'released', '3': 'waiting', '4': 'unknown', '5': 'taken', '6': 'unusable' });
    // A status the server adds shows as a number until the panel names it.
    expect(Object.values(numbered).sort()).toEqual(LEASE_STATUSES.filter((status) => status !== 'off').sort());
    expect(mapped(lease.fieldConfig?.defaults)).toEqual({
      '0': 'off blue',
      '1': 'held green',
      '2': 'released orange',
      '3': 'waiting orange',
      '4': 'unknown orange',
      '5': 'taken red',
      '6': 'unusable red',
    });
  });
});

/** One sample of a /metrics exposition: its name and labels. */
interface Sample {
  name: string;
  labels: Map<string, string>;
}

function samplesOf(exposition: string): Sample[] {
  return [...exposition.matchAll(/^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})? \S+$/gm)].map(([, name = '', labels = '']) => ({
    name,
    labels: new Map([...labels.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, label = '', value = '']) => [label, value])),
  }));
}

/** The `name{label="value"}` selectors of an expression, with their equality matchers (`=~` and `!=` left out). */
function selectorsIn(expr: string): Array<{ name: string; equal: Map<string, string> }> {
  return [...expr.matchAll(/([a-zA-Z_:][\w:]*)\{([^}]*)\}/g)].map(([, name = '', matchers = '']) => ({
    name,
    equal: new Map([...matchers.matchAll(/(\w+)\s*=(?![~=])\s*"([^"]*)"/g)].map(([, label = '', value = '']) => [label, value])),
  }));
}

const rules = alertRules(readFileSync(ALERTS, 'utf8'));
const everyExpression = [
  ...expressions.map(({ panel, expr }) => ({ where: `panel ${panel}`, expr })),
  ...rules.map(({ name, expr }) => ({ where: `alert ${name}`, expr })),
];

/**
 * Series a fresh server cannot have yet, each for a reason that holds until the event: a value
 * of 0 would be a false reading, not a missing one (docs/http-api.md, "Metrics").
 */
const MEASURED_LATER: ReadonlyMap<string, string> = new Map([
  ['bridge_oldest_pending_age_seconds', 'slots times the slot time, which two reads at different slots measure'],
  ['bridge_priority_fee_microlamports', 'the bid of the latest transaction signed'],
  ['bridge_rpc_endpoint_slot', 'from the slot probes, which only a chain with several endpoints sends (there is nothing to choose from one)'],
  ['bridge_vote_latency_seconds_bucket', 'by action, from the first vote that lands'],
  ['bridge_transfer_latency_seconds_bucket', 'by stage, from the first transfer seen finishing'],
  ['bridge_landing_slots_bucket', 'by chain, from the first transaction that lands'],
  ['bridge_crank_last_success_timestamp_seconds', 'the time of the first action that succeeds (a 0 reads as an age of decades)'],
  [
    'bridge_crank_unlanded_since_timestamp_seconds',
    'from the first read that finds work waiting for this authority; absent again whenever nothing waits',
  ],
  ['bridge_flow_held', 'by mint, for each BRIDGE_FLOW_LIMIT_<MINT> set: a server without a flow limit has no series to read'],
]);

/** Series Prometheus writes itself for each target, never in /metrics. */
const PROMETHEUS_OWN: ReadonlySet<string> = new Set(['up']);

describe('the dashboard and the alerts against a live /metrics', () => {
  let bridge: DevnetBridge | undefined;
  let server: ServerProcess | undefined;
  let url: string;
  let atStart: string;
  let afterFirstCycle: string;

  beforeAll(async () => {
    ensureBuilt();
    bridge = await startDevnetBridge();
    server = new ServerProcess(serverEnv(bridge.world, 0, 0));
    url = await server.listening();
    // The first scrape that shows the crank running, however the process orders its startup.
    await waitFor(
      async () => {
        atStart = await (await fetch(`${url}/metrics`)).text();
        return /^bridge_crank_enabled 1$/m.test(atStart);
      },
      { timeoutMs: FIRST_CYCLE_TIMEOUT_MS, what: 'bridge_crank_enabled 1 in /metrics', intervalMs: 20 },
    );
    await waitFor(
      async () => {
        const health = (await (await fetch(`${url}/health`)).json()) as { crank: { last_run_at: number | null } };
        afterFirstCycle = await (await fetch(`${url}/metrics`)).text();
        const finished = /^bridge_crank_last_cycle_finished_timestamp_seconds (\S+)$/m.exec(afterFirstCycle)?.[1];
        return health.crank.last_run_at !== null && Number(finished ?? 0) > 0;
      },
      { timeoutMs: FIRST_CYCLE_TIMEOUT_MS, what: 'the first crank cycle to finish', intervalMs: 100 },
    );
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await bridge?.close();
  });

  it('queries only metrics that a server with the crank enabled exposes', () => {
    expect(afterFirstCycle).toMatch(/^bridge_crank_enabled 1$/m);
    const families = new Set([...afterFirstCycle.matchAll(/^# TYPE (\S+) \S+$/gm)].map((match) => match[1] ?? ''));

    expect(expressions.length).toBeGreaterThan(20);
    for (const { panel, expr } of expressions) {
      const names = metricNamesIn(expr);
      expect(names.length, `${panel}: ${expr}`).toBeGreaterThan(0);
      for (const name of names) expect(familyOf(name, families), `${panel} queries ${name}, which /metrics does not expose`).toBeDefined();
    }
  });

  it('has a sample at 0 of every labelled counter a panel or an alert reads from the first scrape, for each label an alert names', () => {
    const counters = new Set([...atStart.matchAll(/^# TYPE (\S+) counter$/gm)].map((match) => match[1] ?? ''));
    const samples = samplesOf(atStart);
    for (const { where, expr } of everyExpression) {
      for (const name of metricNamesIn(expr).filter((used) => counters.has(used))) {
        expect(
          samples.some((sample) => sample.name === name),
          `${where} reads ${name}, which has no sample at the start`,
        ).toBe(true);
      }
      for (const { name, equal } of selectorsIn(expr).filter((selector) => counters.has(selector.name) && selector.equal.size > 0)) {
        const found = samples.some((sample) => sample.name === name && [...equal].every(([label, value]) => sample.labels.get(label) === value));
        expect(
          found,
          `${where} reads ${name} with ${[...equal].map(([label, value]) => `${label}="${value}"`).join(', ')}: no such sample at the start`,
        ).toBe(true);
      }
    }
  });

  it('names at the start every RPC method the first cycle sent: a method the chain client does not list would appear only with its first request', () => {
    const methods = (exposition: string) =>
      new Set(
        samplesOf(exposition)
          .filter((sample) => sample.name === 'bridge_rpc_requests_total')
          .map((sample) => sample.labels.get('method')),
      );
    expect(methods(afterFirstCycle)).toEqual(methods(atStart));
  });

  it('has a sample of every series a panel or an alert reads once the first cycle finished, but those measured later', () => {
    const names = new Set(samplesOf(afterFirstCycle).map((sample) => sample.name));
    for (const { where, expr } of everyExpression) {
      for (const name of metricNamesIn(expr).filter((used) => !MEASURED_LATER.has(used) && !PROMETHEUS_OWN.has(used))) {
        expect(names.has(name), `${where} reads ${name}, which has no sample after the first cycle`).toBe(true);
      }
    }
  });
});
