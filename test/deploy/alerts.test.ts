import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
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

describe('deploy/prometheus/alerts.yml', () => {
  it('holds the alerts the runbook documents, each with for, severity, summary, description and runbook link', () => {
    expect(rules.map((rule) => rule.name).sort()).toEqual(
      [
        'BridgeBacklogGrowing',
        'BridgeCrankFailing',
        'BridgeCrankStalled',
        'BridgeFeeBalanceLow',
        'BridgeLandingRateLow',
        'BridgePriorityFeeAtCap',
        'BridgeRpcAllEndpointsDown',
        'BridgeRpcEndpointDown',
        'BridgeSecondSigner',
        'BridgeTransfersWaiting',
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

  it('reads only metrics the server declares', () => {
    const declared = new Set(Object.values(createMetrics(new Registry())).flatMap((m) => ('name' in m && typeof m.name === 'string' ? [m.name] : [])));
    for (const rule of rules) {
      const names = metricNamesIn(rule.expr);
      expect(names.length, rule.name).toBeGreaterThan(0);
      for (const name of names) expect(declared.has(name), `${rule.name} reads ${name}, which src/metrics/metrics.ts does not declare`).toBe(true);
    }
  });
});

const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const promtoolInstalled = promtool.error === undefined && promtool.status === 0;

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
