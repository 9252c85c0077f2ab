import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { chainReadMetrics } from './chain-read-metrics.js';
import { crankMetrics } from './crank-metrics.js';
import { landingMetrics } from './landing-metrics.js';
import { watchdogMetrics } from './watchdog-metrics.js';

/**
 * Every metric the server exposes, one registry's worth: the crank's (crank-metrics.ts), reading
 * the chains (chain-read-metrics.ts), landing transactions (landing-metrics.ts) and the
 * watchdog (watchdog-metrics.ts), each declared
 * once with its help text. The registry is owned by the app (never prom-client's global one) so
 * tests can build many apps in one process.
 */

export function createMetrics(registry: Registry = new Registry()) {
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  renameTotalGauges(registry);
  return { registry, ...crankMetrics(registers), ...chainReadMetrics(registers), ...landingMetrics(registers), ...watchdogMetrics(registers) };
}

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * prom-client's default metrics include three gauges named `*_total`, a suffix Prometheus
 * reserves for counters (`promtool check metrics` reports each). Each is re-exposed as
 * `*_all` with the same value and help, and the original removed, so the exposition lints clean.
 */
const TOTAL_GAUGES = ['handles', 'requests', 'resources'] as const;

function renameTotalGauges(registry: Registry): void {
  for (const kind of TOTAL_GAUGES) {
    const name = `nodejs_active_${kind}_total`;
    const original = registry.getSingleMetric(name);
    if (original === undefined) continue;
    registry.removeSingleMetric(name);
    new Gauge({
      name: `nodejs_active_${kind}_all`,
      help: `Total number of active ${kind} (prom-client's ${name}, renamed: only counters end in _total).`,
      registers: [registry],
      async collect() {
        const { values } = await original.get();
        this.set(values[0]?.value ?? 0);
      },
    });
  }
}
