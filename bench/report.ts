import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

/**
 * The one shape every bench returns, and the one way it is shown: a Markdown table on stdout
 * (pasteable into bench/README.md) and bench/results/<name>.json with the machine it ran on.
 * Checks (a duplicate vote, an incomplete run) are cells in the table, never exceptions.
 */

type Cell = number | string | boolean | null;
export type Row = Record<string, Cell>;

export interface Column {
  key: string;
  header: string;
  /** Decimals for numbers; integers print as they are. */
  digits?: number;
}

export interface Table {
  title: string;
  columns: Column[];
  rows: Row[];
  /** What the numbers mean, printed under the table and kept in the JSON. */
  notes?: string[];
}

export interface BenchResult {
  name: string;
  tables: Table[];
  parameters: Record<string, unknown>;
  /** Correctness checks that failed (a duplicate vote, a run that did not finish); empty when all held. */
  failures: string[];
  /** Raw measurements behind the tables, kept in the JSON file only. */
  data?: unknown;
}

export interface Bench {
  name: string;
  description: string;
  run(signal: AbortSignal): Promise<BenchResult>;
}

export interface MachineInfo {
  node: string;
  platform: string;
  arch: string;
  cpuModel: string;
  cores: number;
  totalMemoryMiB: number;
}

export function machineInfo(): MachineInfo {
  const cores = cpus();
  return {
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    cpuModel: cores[0]?.model.trim() ?? 'unknown',
    cores: cores.length,
    totalMemoryMiB: Math.round(totalmem() / 1_048_576),
  };
}

export function formatTable(table: Table): string {
  const header = table.columns.map((column) => column.header);
  const body = table.rows.map((row) => table.columns.map((column) => formatCell(row[column.key] ?? null, column)));
  const widths = header.map((text, i) => Math.max(text.length, ...body.map((cells) => cells[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  const rule = `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`;
  const notes = (table.notes ?? []).map((note) => `- ${note}`);
  return [`### ${table.title}`, '', line(header), rule, ...body.map(line), ...(notes.length > 0 ? ['', ...notes] : [])].join('\n');
}

function formatCell(value: Cell, column: Column): string {
  if (value === null) return '-';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return '-';
    return column.digits === undefined || Number.isInteger(value) ? String(value) : value.toFixed(column.digits);
  }
  return String(value);
}

interface ResultFile {
  bench: string;
  measuredAt: string;
  durationMs: number;
  machine: MachineInfo;
  parameters: Record<string, unknown>;
  failures: string[];
  tables: Table[];
  data?: unknown;
}

/** Writes `dir/<name>.json` and returns its path. */
export async function writeResult(dir: string, result: BenchResult, measuredAt: Date, durationMs: number): Promise<string> {
  const file: ResultFile = {
    bench: result.name,
    measuredAt: measuredAt.toISOString(),
    durationMs: Math.round(durationMs),
    machine: machineInfo(),
    parameters: result.parameters,
    failures: result.failures,
    tables: result.tables,
    ...(result.data === undefined ? {} : { data: result.data }),
  };
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${result.name}.json`);
  await writeFile(path, `${JSON.stringify(file, null, 2)}\n`);
  return path;
}

/** The p-th percentile (0..100) by nearest rank; NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}
