/**
 * The metric names a PromQL expression reads: what is left once strings, label matchers, range
 * and subquery brackets, grouping label lists, Grafana variables, function names, keywords and
 * numbers are taken out. Enough for the expressions this repository ships (deploy/), which
 * promtool and Grafana parse for real.
 */

const KEYWORDS = new Set(['and', 'or', 'unless', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'offset', 'bool', 'inf', 'nan']);

export function metricNamesIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\$\w+/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/(?<![\w:])\d[\w.]*/g, ' ');
  const names = new Set<string>();
  for (const match of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const [name] = match;
    const isFunction = /^\s*\(/.test(bare.slice(match.index + name.length));
    if (!isFunction && !KEYWORDS.has(name.toLowerCase())) names.add(name);
  }
  return [...names];
}

/** The metric family a sample name belongs to, given the families a /metrics exposition declares. */
export function familyOf(name: string, families: ReadonlySet<string>): string | undefined {
  if (families.has(name)) return name;
  const base = name.replace(/_(?:bucket|sum|count)$/, '');
  return families.has(base) ? base : undefined;
}
