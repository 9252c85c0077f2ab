import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/metrics.js';
import { alertRules } from '../support/alert-rules.js';
import { metricNamesIn } from '../support/promql.js';

/**
 * deploy/prometheus/alerts.yml: promtool accepts the rules and passes their unit tests
 * (alerts.test.yml), every alert carries what an on-call needs, every runbook link lands on a
 * heading of docs/operating.md, and every metric an alert reads is one the server declares.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RULES = `${ROOT}deploy/prometheus/alerts.yml`;
const RULE_TESTS = `${ROOT}deploy/prometheus/alerts.test.yml`;
const PROMTOOL_TIMEOUT_MS = 30_000;

/** GitHub's heading anchors: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
function runbookAnchors(): Set<string> {
  const runbook = readFileSync(`${ROOT}docs/operating.md`, 'utf8');
  const headings = runbook.split('\n').filter((line) => /^#{1,6} /.test(line));
  return new Set(
    headings.map((line) =>
      line
        .replace(/^#+ /, '')
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

const rules = alertRules(readFileSync(RULES, 'utf8'));
const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const promtoolInstalled = promtool.error === undefined && promtool.status === 0;

describe('deploy/prometheus/alerts.yml', () => {
  it('holds the alerts the runbook documents, each with for, severity, summary, description and runbook link', () => {
    expect(rules.map((rule) => rule.name).sort()).toEqual(
      [
        'BridgeAuthorityMissing',
        'BridgeBacklogGrowing',
        'BridgeCrankDisabled',
        'BridgeCrankFailing',
        'BridgeCrankStalled',
        'BridgeDegraded',
        'BridgeFeeBalanceLow',
        'BridgeNonceModeLost',
        'BridgeLandingRateLow',
        'BridgePriorityFeeAtCap',
        'BridgeRpcAllEndpointsDown',
        'BridgeRpcEndpointDown',
        'BridgeSecondSigner',
        'BridgeStandbyTooLong',
        'BridgeTargetDown',
        'BridgeTargetMissing',
        'BridgeTransfersWaiting',
        'BridgeVotesNotLanding',
        'BridgeInvariantBreach',
        'BridgeWatchdogHalted',
        'BridgeProgramChanged',
        'BridgeProgramHashMismatch',
        'BridgeGovernanceChange',
        'BridgeFlowHeld',
      ].sort(),
    );
    for (const rule of rules) {
      expect(rule.fields.get('for'), rule.name).toMatch(/^\d+[smh]$/);
      expect(['critical', 'warning'], rule.name).toContain(rule.fields.get('severity'));
      expect(rule.fields.get('summary'), rule.name).toMatch(/\S/);
      expect(rule.fields.get('description'), rule.name).toMatch(/\S/);
      expect(rule.fields.get('runbook_url'), rule.name).toMatch(/^\$\{RUNBOOK_URL\}#[a-z0-9-]+$/);
    }
  });

  it('links every alert to a heading of docs/operating.md', () => {
    const anchors = runbookAnchors();
    for (const rule of rules) {
      const anchor = rule.fields.get('runbook_url')?.split('#')[1] ?? '';
      expect(anchors.has(anchor), `${rule.name}: docs/operating.md has no heading with anchor #${anchor}`).toBe(true);
    }
  });

  it("reads only metrics the server declares (and Prometheus' own `up`)", () => {
    const declared = new Set(
      Object.values(createMetrics(new Registry())).flatMap((m) => ('name' in m && typeof m.name === 'string' ? [m.name] : [])),
    );
    declared.add('up');
    for (const rule of rules) {
      const names = metricNamesIn(rule.expr);
      expect(names.length, rule.name).toBeGreaterThan(0);
      for (const name of names) expect(declared.has(name), `${rule.name} reads ${name}, which src/metrics/metrics.ts does not declare`).toBe(true);
    }
  });
});

/** The rows of docs/operating.md "How each failure pages": alert, severity, delay. */
function pagingTable(): Array<{ alert: string; severity: string; after: string }> {
  const runbook = readFileSync(`${ROOT}docs/operating.md`, 'utf8');
  const section = runbook.slice(runbook.indexOf('## How each failure pages'));
  const table = section.slice(0, section.indexOf('\n\n', section.indexOf('| Failure |')));
  return table
    .split('\n')
    .filter((line) => /^\| .* \| `Bridge\w+` \|/.test(line))
    .map((line) => {
      const cells = line.split(' | ');
      return { alert: cells[1]!.replaceAll('`', ''), severity: cells[2]!, after: cells[3]!.split(' ')[0]! };
    });
}

/** The alerts a promtool test of alerts.test.yml expects to fire (a non-empty exp_alerts). */
function alertsTestedFiring(): Set<string> {
  const tests = readFileSync(RULE_TESTS, 'utf8');
  const fired = new Set<string>();
  for (const match of tests.matchAll(/alertname: (\w+)\n\s+exp_alerts:\n\s+- exp_labels/g)) fired.add(match[1]!);
  return fired;
}

/** The rows of the table whose header is `How votes stop | Pages as` in docs/operating.md: the way, and the alerts named as its page. */
function votesStopTable(): Array<{ way: string; alerts: string[] }> {
  const runbook = readFileSync(`${ROOT}docs/operating.md`, 'utf8');
  const start = runbook.indexOf('| How votes stop | Pages as |');
  const table = runbook.slice(start, runbook.indexOf('\n\n', start));
  return table
    .split('\n')
    .slice(2)
    .map((line) => {
      const [way = '', pages = ''] = line.slice(2, -2).split(' | ');
      return { way, alerts: [...pages.matchAll(/`(Bridge\w+)`/g)].map((match) => match[1]!) };
    });
}

describe('docs/operating.md "How each failure pages"', () => {
  const rows = pagingTable();

  it('"How votes stop": every way names at least one critical rule of alerts.yml that pages it, and the send outage is among them', () => {
    const ways = votesStopTable();
    expect(ways.length).toBeGreaterThanOrEqual(10);
    const critical = new Set(rules.filter((rule) => rule.fields.get('severity') === 'critical').map((rule) => rule.name));
    const known = new Set(rules.map((rule) => rule.name));
    for (const { way, alerts } of ways) {
      for (const alert of alerts) expect(known.has(alert), `"${way}" names ${alert}, which alerts.yml does not hold`).toBe(true);
      expect(
        alerts.some((alert) => critical.has(alert)),
        `"${way}" pages no one: none of ${alerts.join(', ')} is critical`,
      ).toBe(true);
    }
    expect(ways.map((row) => row.way).join('\n')).toMatch(/send refused.*HTTP 500/);
    // Every critical rule is the page of some way votes stop.
    for (const alert of critical)
      expect(
        ways.some((row) => row.alerts.includes(alert)),
        `${alert} pages for no way listed`,
      ).toBe(true);
  });

  it('has one row per alert, with its severity and delay as alerts.yml says', () => {
    expect(rows.map((row) => row.alert).sort()).toEqual(rules.map((rule) => rule.name).sort());
    for (const row of rows) {
      const rule = rules.find((candidate) => candidate.name === row.alert)!;
      expect(row.severity, row.alert).toBe(rule.fields.get('severity'));
      expect(row.after, row.alert).toBe(rule.fields.get('for'));
    }
  });

  it('backs every row by a promtool test case in which its alert fires', () => {
    const fired = alertsTestedFiring();
    for (const row of rows) expect(fired.has(row.alert), `${row.alert}: no promtool test expects it to fire`).toBe(true);
  });
});

const SCRAPE_CONFIG = `${ROOT}deploy/prometheus/scrape-config.yml`;

describe('deploy/prometheus/scrape-config.yml', () => {
  const text = readFileSync(SCRAPE_CONFIG, 'utf8');

  /** The file with its Cloud Run job uncommented, as its comment says (`sed -i 's/^#: /  /'`). */
  const withCloudRun = text.replace(/^#: /gm, '  ');

  it('labels every job `bridge`, the job the availability alerts select, and every target with its authority', () => {
    const jobs = [...withCloudRun.matchAll(/^ {2}- job_name: (\S+)$/gm)].map((match) => match[1]);
    expect(jobs).toEqual(['bridge', 'bridge-cloud-run']);
    expect(withCloudRun).toMatch(/- target_label: job\n\s+replacement: bridge/);
    // BridgeAuthorityMissing groups by it.
    expect([...withCloudRun.matchAll(/- targets: /g)]).toHaveLength([...withCloudRun.matchAll(/\n\s+authority: \S+/g)].length);
    for (const rule of rules.filter((candidate) => /\bup\b|absent\(/.test(candidate.expr))) expect(rule.expr, rule.name).toContain('job="bridge"');
  });

  it.runIf(promtoolInstalled)(
    'promtool check config: valid as shipped (no token file anywhere), and with the Cloud Run job once its token file exists',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'scrape-config-'));
      const check = (config: string) => {
        writeFileSync(join(dir, 'scrape-config.yml'), config);
        const result = spawnSync('promtool', ['check', 'config', join(dir, 'scrape-config.yml')], { encoding: 'utf8', timeout: PROMTOOL_TIMEOUT_MS });
        return { output: `${result.stdout}${result.stderr}`, status: result.status };
      };
      try {
        copyFileSync(RULES, join(dir, 'alerts.yml'));
        const shipped = check(text);
        expect(shipped.output).toContain('is valid prometheus config file syntax');
        expect(shipped.status).toBe(0);
        // credentials_file must exist when the configuration loads: the sidecar's token file, here an empty one.
        const tokenFile = join(dir, 'id-token');
        writeFileSync(tokenFile, '');
        expect(withCloudRun).toContain('credentials_file: /var/run/bridge/id-token');
        const cloudRun = check(withCloudRun.replaceAll('/var/run/bridge/id-token', tokenFile));
        expect(cloudRun.output).toContain('is valid prometheus config file syntax');
        expect(cloudRun.status).toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe('promtool on the shipped rules', () => {
  it.runIf(process.env.CI !== undefined)('is installed in CI (.ci/run installs the prometheus package)', () => {
    expect(promtoolInstalled, 'promtool is missing: CI must check the alert rules').toBe(true);
  });

  it.runIf(promtoolInstalled)('check rules: the file is valid', () => {
    const check = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8', timeout: PROMTOOL_TIMEOUT_MS });
    expect(`${check.stdout}${check.stderr}`).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(check.status).toBe(0);
  });

  it.runIf(promtoolInstalled)('test rules: every alert fires on its firing series and stays quiet on the others', () => {
    const test = spawnSync('promtool', ['test', 'rules', RULE_TESTS], { encoding: 'utf8', timeout: PROMTOOL_TIMEOUT_MS });
    expect(`${test.stdout}${test.stderr}`).toContain('SUCCESS');
    expect(test.status).toBe(0);
    const tested = readFileSync(RULE_TESTS, 'utf8').match(/alertname: (\w+)/g) ?? [];
    for (const rule of rules) expect(tested, `${rule.name} has no promtool test`).toContain(`alertname: ${rule.name}`);
  });
});
