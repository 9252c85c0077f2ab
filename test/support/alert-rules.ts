/** One `- alert:` block of deploy/prometheus/alerts.yml: its name, expression and other fields. */
export interface AlertRule {
  name: string;
  expr: string;
  fields: Map<string, string>;
}

/** promtool validates the YAML; this reads the fields of each `- alert:` block of that one file. */
export function alertRules(text: string): AlertRule[] {
  return text
    .split(/^\s+- alert: /m)
    .slice(1)
    .map((block) => {
      const [name = '', ...lines] = block.split('\n');
      const exprEnd = lines.findIndex((line) => /^\s+for:/.test(line));
      const exprLines = lines.slice(0, exprEnd).filter((line) => !/^\s*#/.test(line));
      const fields = new Map<string, string>();
      for (const line of lines.slice(exprEnd)) {
        const field = /^\s+(\w+): "?(.*?)"?$/.exec(line);
        if (field?.[1] !== undefined && field[2] !== undefined) fields.set(field[1], field[2]);
      }
      return { name: name.trim(), expr: exprLines.join('\n').replace(/^\s*expr: \|?/, ''), fields };
    });
}
