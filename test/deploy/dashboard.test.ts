import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverEnv } from '../../devnet/server-env.js';
import { startDevnetBridge, type DevnetBridge } from '../integration/support/devnet-bridge.js';
import { waitFor } from '../support/wait-for.js';
import { familyOf, metricNamesIn } from '../support/promql.js';
import { ServerProcess, ensureBuilt } from '../support/server-process.js';

/**
 * deploy/grafana/bridge-dashboard.json against a live server: `node dist/index.js` with the
 * crank enabled against the devnet must expose every metric any panel queries (a `# TYPE`
 * line; histograms through their _bucket, _sum and _count samples).
 */

const DASHBOARD = fileURLToPath(new URL('../../deploy/grafana/bridge-dashboard.json', import.meta.url));
const FIRST_CYCLE_TIMEOUT_MS = 20_000;

interface Panel {
  id: number;
  type: string;
  title: string;
  targets?: { expr: string; datasource: { uid: string } }[];
}

const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { uid: string; panels: Panel[] };
const queryPanels = dashboard.panels.filter((panel) => panel.type !== 'row');
const expressions = queryPanels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })));

describe('deploy/grafana/bridge-dashboard.json', () => {
  it('has one query at least per panel, unique panel ids, and the data source chosen at import', () => {
    for (const panel of queryPanels) {
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
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
    ]) {
      expect(queried.has(name), `no panel queries ${name}`).toBe(true);
    }
  });
});

describe('the dashboard against a live /metrics', () => {
  let bridge: DevnetBridge | undefined;
  let server: ServerProcess | undefined;

  beforeAll(() => ensureBuilt(), 120_000);
  afterAll(async () => {
    await server?.stop();
    await bridge?.close();
  });

  it('queries only metrics that a server with the crank enabled exposes', async () => {
    bridge = await startDevnetBridge();
    server = new ServerProcess(serverEnv(bridge.world, 0, 0));
    const url = await server.listening();
    await waitFor(async () => {
      const health = (await (await fetch(`${url}/health`)).json()) as { crank: { last_run_at: number | null } };
      return health.crank.last_run_at !== null;
    }, { timeoutMs: FIRST_CYCLE_TIMEOUT_MS, what: 'the first crank cycle (crank.last_run_at in /health)', intervalMs: 100 });
    const exposition = await (await fetch(`${url}/metrics`)).text();
    expect(exposition).toMatch(/^bridge_crank_enabled 1$/m);
    const families = new Set([...exposition.matchAll(/^# TYPE (\S+) \S+$/gm)].map((match) => match[1] ?? ''));

    expect(expressions.length).toBeGreaterThan(20);
    for (const { panel, expr } of expressions) {
      const names = metricNamesIn(expr);
      expect(names.length, `${panel}: ${expr}`).toBeGreaterThan(0);
      for (const name of names) expect(familyOf(name, families), `${panel} queries ${name}, which /metrics does not expose`).toBeDefined();
    }
  }, 60_000);
});
