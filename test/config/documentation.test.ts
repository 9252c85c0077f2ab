import { readFileSync } from 'node:fs';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, DEFAULTS, parseConfig } from '../../src/config/config.js';
import { createMetrics } from '../../src/metrics/metrics.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

function envExampleEntries(): Array<[string, string]> {
  return read('.env.example')
    .split('\n')
    .filter((line) => /^[A-Z_]+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]);
}

describe('.env.example', () => {
  it('lists every variable the server reads, once, and nothing else', () => {
    expect(envExampleEntries().map(([name]) => name)).toEqual(CONFIG_VARIABLES);
  });

  it('shows the real defaults and is itself a valid configuration', () => {
    const entries = envExampleEntries();
    for (const [name, value] of entries.filter(([, v]) => v !== '')) {
      expect(DEFAULTS[name as keyof typeof DEFAULTS], name).toBe(value);
    }
    expect(() => parseConfig(Object.fromEntries(entries))).not.toThrow();
  });
});

describe('docs/configuration.md and docs/http-api.md', () => {
  it('docs/configuration.md documents every configuration variable', () => {
    const configuration = read('docs/configuration.md');
    for (const name of CONFIG_VARIABLES) expect(configuration, name).toContain(`\`${name}\``);
  });

  it('docs/http-api.md documents every bridge metric in the metrics table', () => {
    const httpApi = read('docs/http-api.md');
    const names = createMetrics(new Registry())
      .registry.getMetricsAsArray()
      .map((metric) => metric.name)
      .filter((name) => name.startsWith('bridge_'));
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(httpApi, name).toMatch(new RegExp(`^\\| \`${name}\` \\|`, 'm'));
  });
});

describe('README.md', () => {
  const readme = read('README.md');

  it('starts with the run command and the test command', () => {
    const firstBlock = readme.slice(readme.indexOf('```sh'), readme.indexOf('```', readme.indexOf('```sh') + 5));
    expect(firstBlock).toContain('npm ci && npm test');
    expect(firstBlock).toMatch(/npm ci && npm (start|run demo)/);
  });
});
