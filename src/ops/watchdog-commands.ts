import { createReadStream } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { createInterface } from 'node:readline';
import { Option, type Command } from 'commander';
import { parseConfig } from '../config/config.js';
import { BridgeError } from '../errors.js';
import { acknowledgeBreach, releaseFlow } from './acknowledge.js';

/**
 * The watchdog's ops commands (docs/operating.md "The watchdog"): `acknowledge <breach>` (changes
 * the server's state: one audit line), and `audit [file]`, which prints the audit lines of a log
 * (the server's admin requests and these commands'), from a file or stdin.
 */

/** What an ops command that signs or changes state writes on stderr: the same `audit` line the server writes for an admin request. */
export function auditLine(what: string, outcome: string): string {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    user = String(process.getuid?.() ?? 'unknown');
  }
  return JSON.stringify({
    level: 'info',
    time: new Date().toISOString(),
    msg: 'audit',
    audit: { address: `local:${hostname()}`, user, what, outcome },
  });
}

interface Output {
  json: boolean;
  out(text: string): void;
}

type Run = (action: (output: Output) => Promise<void>, json: boolean) => Promise<void>;

/** Audit lines `ops audit` keeps: the newest this many of the input. */
const MAX_AUDIT_LINES = 1_000;

export function addWatchdogCommands(cli: Command, run: Run): void {
  const jsonOption = () => new Option('--json', 'print JSON for machines');
  cli
    .command('acknowledge')
    .description(
      'acknowledge a breach the watchdog halted on (BRIDGE_WATCHDOG_FILE): the server votes again at its next cycle when no other breach is open',
    )
    .argument('<breach>', 'the breach id of the error line and /health (e.g. finalized_mismatch:target:0:g4)')
    .addOption(jsonOption())
    .action((breach: string, options: { json?: boolean }) => run((output) => acknowledge(breach, output), options.json === true));
  cli
    .command('flow')
    .description('the flow breaker (BRIDGE_FLOW_LIMIT_<MINT>)')
    .command('release')
    .description('let the transfer the flow breaker holds through: votes resume in order at the next cycle')
    .argument('<hold>', 'the hold id of the error line and /health crank.watchdog.flow_held.id (flow:<entry>:<mint>:<amount>)')
    .addOption(jsonOption())
    .action((hold: string, options: { json?: boolean }) => run((output) => release(hold, output), options.json === true));
  cli
    .command('audit')
    .description(`print the audit lines (admin requests, ops commands that change state) of a log file or stdin, the newest ${MAX_AUDIT_LINES}`)
    .argument('[file]', 'a log file of the server (JSON lines); stdin when absent')
    .addOption(jsonOption())
    .action((file: string | undefined, options: { json?: boolean }) => run((output) => audit(file, output), options.json === true));
}

/** BRIDGE_WATCHDOG_FILE as the server reads it, and who runs the command. */
function watchdogFile(command: string): { file: string; by: string } {
  const file = parseConfig(process.env).config.crank?.watchdog.watchdogFile;
  if (file === undefined) {
    throw new BridgeError('CONFIG__INVALID', {
      problems: [
        `BRIDGE_WATCHDOG_FILE: not set; npm run ops -- ${command} writes to the file the server keeps its breaches in (set the variables as for the server)`,
      ],
    });
  }
  return { file, by: (JSON.parse(auditLine('', '')) as { audit: { user: string } }).audit.user };
}

async function release(hold: string, output: Output): Promise<void> {
  const { file, by } = watchdogFile('flow release');
  const result = releaseFlow(file, hold, by);
  process.stderr.write(`${auditLine(`ops flow release ${hold}`, 'released' in result ? 'released' : `refused: ${result.refused}`)}\n`);
  if ('refused' in result) throw new BridgeError('CONFIG__INVALID', { problems: [result.refused] });
  output.out(output.json ? JSON.stringify(result) : `released ${hold}; the server votes it at its next cycle`);
}

async function acknowledge(breach: string, output: Output): Promise<void> {
  const { file, by } = watchdogFile('acknowledge');
  const result = acknowledgeBreach(file, breach, by);
  const outcome = 'acknowledged' in result ? 'acknowledged' : `refused: ${result.refused}`;
  process.stderr.write(`${auditLine(`ops acknowledge ${breach}`, outcome)}\n`);
  if ('refused' in result) {
    const open = result.unacknowledged.map((one) => one.id);
    throw new BridgeError('CONFIG__INVALID', { problems: [`${result.refused}${open.length === 0 ? '' : `; unacknowledged: ${open.join(', ')}`}`] });
  }
  const still = result.stillHalting.map((one) => one.id);
  output.out(
    output.json
      ? JSON.stringify({ acknowledged: result.acknowledged.id, still_unacknowledged: still })
      : `acknowledged ${result.acknowledged.id} (${result.acknowledged.invariant})${still.length === 0 ? '; the server votes again at its next cycle' : `; still unacknowledged: ${still.join(', ')}`}`,
  );
}

async function audit(file: string | undefined, output: Output): Promise<void> {
  const input = file === undefined ? process.stdin : createReadStream(file, { encoding: 'utf8' });
  const kept: Array<{ time: string; audit: { address: string; user: string | null; what: string; outcome: number | string } }> = [];
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    if (!line.includes('"audit"')) continue;
    try {
      const record = JSON.parse(line) as { msg?: string; time?: string; audit?: (typeof kept)[number]['audit'] };
      if (record.msg !== 'audit' || record.audit === undefined) continue;
      kept.push({ time: String(record.time ?? ''), audit: record.audit });
      if (kept.length > MAX_AUDIT_LINES) kept.shift();
    } catch {
      // Not a JSON line (a torn write or another program's output): not an audit line.
    }
  }
  if (output.json) output.out(JSON.stringify(kept));
  else for (const { time, audit: one } of kept) output.out(`${time}  ${one.address}  ${one.user ?? '-'}  ${one.what}  ${one.outcome}`);
}
