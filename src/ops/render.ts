import Table from 'cli-table3';
import { KEY_SERVICE_NAMES, type SignerDescription } from '../signer/authority-signer.js';
import type { TrackerSummary } from '../transfers/transfer-queries.js';
import { PHASES, type ResultView, type TransferView, type Voters } from '../transfers/transfer-view.js';
import type { StatusReport, TransferAge } from './status.js';

/** Human output of `npm run ops` (tables); `--json` prints the same data unrendered. */

/** Plain text: no colour codes, so that the output reads the same in a log file or a ticket. */
function table(head: string[]): Table.Table {
  return new Table({ head, style: { head: [], border: [] } });
}

export function renderStatus(report: StatusReport, authority: string, signer: SignerDescription): string {
  const trackers = table(['', 'source DepositTracker', 'destination WithdrawTracker']);
  const row = (label: string, pick: (summary: TrackerSummary) => string) => trackers.push([label, pick(report.source), pick(report.destination)]);
  row('entry_count', (summary) => summary.entry_count);
  row('settled_prefix', (summary) => summary.settled_prefix);
  row('generation', (summary) => summary.generation);
  row('threshold', (summary) => String(summary.threshold));
  const authorities = table(['authority', 'source next_index / last vote', 'destination next_index / last vote']);
  for (const [slot, position] of report.source.authorities.entries()) {
    const destination = report.destination.authorities.find((other) => other.authority === position.authority);
    const mark = position.authority === authority ? ' (this server)' : '';
    authorities.push([
      `${slot}: ${position.authority}${mark}`,
      `${position.next_index} / ${position.last_vote}`,
      destination === undefined ? '-' : `${destination.next_index} / ${destination.last_vote}`,
    ]);
  }
  const phases = table(['phase', 'transfers', 'oldest', 'oldest waited']);
  for (const phase of PHASES) {
    phases.push([
      phase,
      String(report.phases[phase]),
      report.oldest[phase] === undefined ? '-' : String(report.oldest[phase]),
      describeAge(report.oldest_age[phase]),
    ]);
  }
  const { counted } = report;
  return [
    `this server signs as ${authority} with ${describeSigner(signer)}`,
    trackers.toString(),
    authorities.toString(),
    `ahead: ${describeAhead(report)}`,
    `transfers ${counted.from}..${counted.to - 1} (from the source settled_prefix)${counted.truncated ? ', truncated: more entries than ops status reads' : ''}; waited: since the deposit (deposit_slot)${report.source_slot_ms === null ? ', in slots (the slot time could not be measured)' : `, at ${Math.round(report.source_slot_ms)} ms per source slot as measured`}:`,
    phases.toString(),
  ].join('\n');
}

/** "42 s (105 slots)"; slots alone while the slot time is unmeasured. */
function describeAge(age: TransferAge | undefined): string {
  if (age === undefined) return '-';
  return age.seconds === null ? `${age.slots} slots` : `${age.seconds} s (${age.slots} slots)`;
}

function describeAhead(report: StatusReport): string {
  if (report.ahead === 'source') return `source (${report.deposits_without_destination_entry} deposits have no destination entry yet)`;
  if (report.ahead === 'even') return 'even (every deposit has its destination entry)';
  return 'destination (more destination entries than deposits: check the chain ids and a governance reset)';
}

export function renderTransfer(transfer: TransferView): string {
  const entries = table([`transfer ${transfer.index}`, 'source deposit entry', 'destination withdraw entry']);
  const { source, destination } = transfer;
  entries.push(
    ['status', source.status, destination?.status ?? 'none (no ack_deposit proposal yet)'],
    ['amount', source.amount, destination?.amount ?? '-'],
    ['result', describeResult(source.result), destination === null ? '-' : describeResult(destination.result)],
    ['proposed', describeResult(source.proposed), '-'],
    ['created_token_account', '-', destination?.created_token_account ?? '-'],
    ['cleanup_completed', String(source.cleanup_completed), '-'],
    ['yes votes', describeVoters(source.voters, 'yes'), destination === null ? '-' : describeVoters(destination.voters, 'yes')],
    ['no votes', describeVoters(source.voters, 'no'), destination === null ? '-' : describeVoters(destination.voters, 'no')],
  );
  const lines = [
    entries.toString(),
    `phase: ${transfer.phase}`,
    `rule 3.1 (result relayable by ack_withdraw): ${transfer.rule_3_1_holds ? 'holds' : 'does not hold'}`,
  ];
  if (transfer.recovery !== null) {
    lines.push(`SPEC §7: ${transfer.recovery.symptom}`, `  meaning: ${transfer.recovery.meaning}`, `  action: ${transfer.recovery.action}`);
  } else {
    lines.push('SPEC §7: nothing to do (cleaned up)');
  }
  return lines.join('\n');
}

function describeResult(result: ResultView): string {
  if (result.kind === 'Confirmed') return `Confirmed ${result.amount}`;
  if (result.kind === 'Rejected') return `Rejected (${result.reason})`;
  return 'None';
}

function describeVoters(voters: Voters, side: keyof Voters): string {
  return voters[side].length === 0 ? 'none' : voters[side].join('\n');
}

/** Which kind of signer holds the key: never a PIN. */
export function describeSigner(signer: SignerDescription): string {
  if (signer.kind === 'file') return 'a keypair file';
  if (signer.kind === 'pkcs11') return `the PKCS#11 token ${JSON.stringify(signer.token)}`;
  return `the ${KEY_SERVICE_NAMES[signer.kind]} key ${JSON.stringify(signer.key)}`;
}
