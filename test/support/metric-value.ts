/** What prom-client's counters, gauges and histograms answer to `get()`. */
interface MetricLike {
  get(): Promise<{ values: Array<{ value: number; labels: Record<string, string | number | undefined>; metricName?: string }> }>;
}

/**
 * A counter's or gauge's value over the series whose labels include `labels`, summed (0 when
 * none): `metricValue(metrics.crankCycles, { outcome: 'ok' })`, or every series with `{}`.
 */
export async function metricValue(metric: MetricLike, labels: Record<string, string> = {}): Promise<number> {
  const { values } = await metric.get();
  const matches = (valueLabels: Record<string, unknown>) => Object.entries(labels).every(([key, expected]) => valueLabels[key] === expected);
  return values.filter((value) => matches(value.labels)).reduce((sum, value) => sum + value.value, 0);
}

/** The value of the first series whose labels include `labels`; undefined when there is none (a gauge never set). */
export async function metricSample(metric: MetricLike, labels: Record<string, string>): Promise<number | undefined> {
  const { values } = await metric.get();
  return values.find((value) => Object.entries(labels).every(([key, expected]) => value.labels[key] === expected))?.value;
}

/** A histogram's observation count (or their sum) over the series whose labels include `labels`. */
export async function histogramValue(metric: MetricLike, field: 'count' | 'sum', labels: Record<string, string> = {}): Promise<number> {
  const { values } = await metric.get();
  const series = values.filter((value) => value.metricName?.endsWith(`_${field}`) === true);
  return metricValue({ get: async () => ({ values: series }) }, labels);
}
