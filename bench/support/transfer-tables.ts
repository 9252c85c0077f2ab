import { percentile, type Column, type Row, type Table } from '../report.js';
import type { AuthorityAccount, SentAction } from './sent-transactions.js';
import type { TransferRunResult } from './transfer-run.js';

/**
 * Rows shared by the transfer benches. A configuration runs a few times (crank timers and
 * contention make single runs vary by seconds): times are shown as the median with the range,
 * counts as totals over the runs, and a check fails when it failed in any run.
 */

export interface RunGroup {
  label: string;
  results: TransferRunResult[];
}

const seconds = (ms: number) => ms / 1000;
const ratio = (numerator: number, denominator: number) => (denominator === 0 ? Number.NaN : numerator / denominator);
const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);

/** "median (min–max)" in seconds, or "-" when a run did not finish. */
export function secondsSpread(values: readonly number[]): string {
  if (values.length === 0 || values.some((value) => !Number.isFinite(value))) return '-';
  const [median, min, max] = [percentile(values, 50), Math.min(...values), Math.max(...values)].map((ms) => seconds(ms).toFixed(2));
  return values.length === 1 ? median! : `${median} (${min}–${max})`;
}

export function medianOf(results: readonly TransferRunResult[], pick: (result: TransferRunResult) => number): number {
  return percentile(results.map(pick), 50);
}

export function totalOf(results: readonly TransferRunResult[], pick: (result: TransferRunResult) => number): number {
  return sum(results.map(pick));
}

export function completedCell(results: readonly TransferRunResult[]): string {
  const all = results.every((result) => result.completed === result.deposits);
  return all ? `${results[0]!.deposits} ×${results.length}` : results.map((result) => `${result.completed}/${result.deposits}`).join(', ');
}

export function duplicateVotes(result: TransferRunResult): number {
  return sum(result.authorities.map((authority) => authority.duplicateVotes));
}

export function checkCell(results: readonly TransferRunResult[]): string {
  return results.every((result) => result.problems.length === 0) ? 'ok' : 'FAIL';
}

export const RUN_COLUMNS: Column[] = [
  { key: 'completed', header: 'done ×runs' },
  { key: 'cleanedUp', header: 'all cleaned up (s)' },
  { key: 'perSecond', header: 'transfers/s', digits: 1 },
  { key: 'settled', header: 'all votes cast (s)' },
  { key: 'p50', header: 'p50 (s)', digits: 2 },
  { key: 'p95', header: 'p95 (s)', digits: 2 },
  { key: 'cycles', header: 'cycles' },
  { key: 'landed', header: 'tx landed a0/a1/a2' },
  { key: 'ackDepositBatch', header: 'votes/tx ack_deposit', digits: 1 },
  { key: 'ackWithdrawBatch', header: 'votes/tx ack_withdraw', digits: 1 },
  { key: 'cleanupBatch', header: 'cleanups/tx', digits: 1 },
  { key: 'cpu', header: 'CPU (% of a core)', digits: 0 },
  { key: 'duplicateVotes', header: 'duplicate votes' },
  { key: 'check', header: 'check' },
];

/** One configuration: medians per run, batching over every landed transaction of every run. */
export function runRow(group: RunGroup): Row {
  const { results } = group;
  const batch = (action: SentAction) =>
    ratio(
      totalOf(results, (result) => result.batches[action].instructions),
      totalOf(results, (result) => result.batches[action].transactions),
    );
  const rounds = results[0]!.rounds === null ? '' : ` (${medianOf(results, (result) => result.rounds ?? Number.NaN)} rounds)`;
  return {
    completed: completedCell(results),
    cleanedUp: secondsSpread(results.map((result) => result.cleanedUpMs)),
    perSecond: medianOf(results, (result) => result.deposits / seconds(result.cleanedUpMs)),
    settled: secondsSpread(results.map((result) => result.settledMs)),
    p50: seconds(medianOf(results, (result) => result.latencyMs.p50)),
    p95: seconds(medianOf(results, (result) => result.latencyMs.p95)),
    cycles: `${medianOf(results, (result) => result.counters.cycles)}${rounds}`,
    landed: [0, 1, 2].map((slot) => medianOf(results, (result) => landedTotal(result.authorities[slot]!))).join('/'),
    ackDepositBatch: batch('ack_deposit'),
    ackWithdrawBatch: batch('ack_withdraw'),
    cleanupBatch: batch('cleanup_deposit'),
    cpu: medianOf(results, (result) => result.cpuPercent),
    duplicateVotes: totalOf(results, duplicateVotes),
    check: checkCell(results),
  };
}

function landedTotal(authority: AuthorityAccount): number {
  const { ack_deposit: deposit, ack_withdraw: withdraw, cleanup_deposit: cleanup } = authority.byAction;
  return deposit.landed + withdraw.landed + cleanup.landed;
}

const AUTHORITY_COLUMNS: Column[] = [
  { key: 'run', header: 'configuration (totals over its runs)' },
  { key: 'authority', header: 'authority' },
  { key: 'ackDeposit', header: 'ack_deposit tx (votes)' },
  { key: 'ackWithdraw', header: 'ack_withdraw tx (votes)' },
  { key: 'cleanup', header: 'cleanup tx (entries)' },
  { key: 'landedFailed', header: 'landed with error' },
  { key: 'notLanded', header: 'sent, not landed' },
  { key: 'fees', header: 'fees paid (tx)' },
  { key: 'votesOnChain', header: 'votes on chain (target/source)' },
  { key: 'duplicateVotes', header: 'duplicate votes' },
];

/** Per configuration and authority, totals over the runs of what the chain holds: the evidence behind the check column. */
export function authorityTable(title: string, groups: readonly RunGroup[]): Table {
  const rows = groups.flatMap(({ label, results }) =>
    [0, 1, 2].map((slot) => {
      const accounts = results.map((result) => result.authorities[slot]!);
      const total = (pick: (account: AuthorityAccount) => number) => sum(accounts.map(pick));
      const action = (name: SentAction) =>
        `${total((account) => account.byAction[name].landed)} (${total((account) => account.byAction[name].instructions)})`;
      return {
        run: label,
        authority: slot,
        ackDeposit: action('ack_deposit'),
        ackWithdraw: action('ack_withdraw'),
        cleanup: action('cleanup_deposit'),
        landedFailed: total((account) => sum(Object.values(account.byAction).map((count) => count.landedFailed))),
        notLanded: total((account) => account.neverLanded),
        fees: total((account) => account.feeTransactions),
        votesOnChain: `${total((account) => account.votesOnChain.ackDeposit)}/${total((account) => account.votesOnChain.ackWithdraw)}`,
        duplicateVotes: total((account) => account.duplicateVotes),
      };
    }),
  );
  return {
    title,
    columns: AUTHORITY_COLUMNS,
    rows,
    notes: [
      'Every transaction each crank sent is recorded on its way out (signature and the entry indices it carries); the ledger then says which signatures landed, with or without an error. sent, not landed: refused in preflight (mostly cleanup_deposit of an entry another authority cleaned up first: no fee) or dropped and then expired.',
      "duplicate votes: a vote (action, entry) carried by more than one landed transaction, with or without an error; must be 0. fees paid: the authority's lamports spent / 5000, which must equal its landed transactions (with or without an error).",
      'votes on chain: entries whose vote masks hold this authority (WithdrawTracker / DepositTracker); they must equal the votes its landed transactions carried.',
    ],
  };
}

/** Every run's measurements, for the JSON result. */
export function runsData(groups: readonly RunGroup[]): unknown {
  return groups.map(({ label, results }) => ({ label, runs: results }));
}
