import { PublicKey, type TransactionInstruction } from '@solana/web3.js';
import type { BridgeError } from '../../../errors.js';
import { resendAfterRefusal } from '../../../failure-policy.js';
import type { Metrics } from '../../../metrics/metrics.js';
import type { CleanupReport } from '../../port/bridge-chains.js';
import { decodeDepositEntries } from '../../codec/accounts.js';
import { cleanupDepositInstruction } from '../../codec/builders.js';
import { DEPOSIT_ENTRY_SIZE } from '../../codec/layout.js';
import type { DepositEntry } from '../../types.js';
import { sendBatches, type BatchItem, type BudgetedSubmitter } from './send-batches.js';
import { asSubmitFailure, submitFailure, type ActionTarget } from './settle/send-outcome.js';
import { entryIndexArg } from './submit-votes.js';
import { MAX_SLICE_BYTES, ReadMeter, readEntries, readTrackerHeader, type TrackerRef } from '../read/tracker-reader.js';
import { coveringRanges } from '../read/window.js';
import { toEntryIndex } from '../../port/authority-position.js';

/**
 * cleanup_deposit for the given source entries, batched. The instruction needs each entry's
 * depositor, so the entries are read again at confirmed just before sending (a few hundred
 * bytes): no cache to go stale, and entries someone else cleaned up meanwhile are reported as
 * already done without spending a transaction on them. Those still to send are checked once
 * more at processed, and one another payer's cleanup already holds there is not sent.
 *
 * A batch is all or nothing. When instruction k fails, entry k is taken out (already done for
 * CleanupAlreadyCompleted, failed for any other program error) and the rest is sent again.
 * Failed entries do not stop the others; they are reported together at the end.
 */

export interface CleanupSubmitter extends BudgetedSubmitter {
  metrics: Metrics;
  cleanupInstruction: (index: number, depositor: PublicKey) => TransactionInstruction;
}

type Candidate = BatchItem;

interface Failure {
  index: number;
  reason: string;
}

/** cleanup_deposit of one entry of the DepositTracker `tracker`, paid by `payer`. */
export function cleanupFor(tracker: TrackerRef, payer: PublicKey) {
  return (index: number, depositor: PublicKey): TransactionInstruction =>
    cleanupDepositInstruction({ programId: tracker.programId, payer, depositTracker: tracker.address, depositor, index: BigInt(index) });
}

/** cleanupDeposits (wired in ../create-chain-client.ts), on the source's DepositTracker. */
export async function submitCleanups(s: CleanupSubmitter, indices: readonly number[], signal: AbortSignal): Promise<CleanupReport> {
  const report: CleanupReport = { transactions: [], completed: [], alreadyDone: [] };
  try {
    for (const [i, index] of indices.entries()) entryIndexArg(index, `indices[${i}]`);
    const settled = await s.sender.settlePending(s.target.action, signal);
    report.transactions.push(...settled.landed, ...settled.landedWithError);
    report.completed.push(...settled.landed.flatMap((transaction) => transaction.indices));
    const wanted = [...new Set(indices)].filter((index) => !report.completed.includes(index)).sort((a, b) => a - b);
    const failures: Failure[] = [];
    const candidates = await candidatesOf(s, wanted, { report, failures }, signal);
    await sendCleanups(s, candidates, { report, failures }, signal);
    if (failures.length > 0) throw failedEntries(s.target, failures);
    return report;
  } catch (err) {
    throw asSubmitFailure(err, s.target, report.transactions, signal);
  }
}

async function candidatesOf(
  s: CleanupSubmitter,
  indices: readonly number[],
  out: { report: CleanupReport; failures: Failure[] },
  signal: AbortSignal,
): Promise<Candidate[]> {
  if (indices.length === 0) return [];
  const entries = await readCandidates(s, indices, signal);
  const ready: Array<{ index: number; depositor: string }> = [];
  for (const index of indices) {
    const entry = entries.get(index);
    if (entry === undefined) out.failures.push({ index, reason: 'EntryNotFound: at or past entry_count' });
    else if (entry.cleanupCompleted) out.report.alreadyDone.push(index);
    else if (entry.status !== 'Finalized') out.failures.push({ index, reason: `EntryNotFinalized: status is ${entry.status}` });
    else ready.push({ index, depositor: entry.depositor });
  }
  const inFlight = await cleanedAtProcessed(
    s,
    ready.map(({ index }) => index),
    signal,
  );
  return ready
    .filter(({ index }) => !inFlight.has(index))
    .map(({ index, depositor }) => ({ index, instruction: s.cleanupInstruction(index, new PublicKey(depositor)) }));
}

/**
 * The entries among `indices` (Finalized and not cleaned up at confirmed) that the processed
 * bank already shows cleaned up: another payer's cleanup at the head, not yet confirmed. Sent
 * now, a cleanup of one passes preflight (the confirmed bank) and lands failing with
 * CleanupAlreadyCompleted, fee paid. This read only holds a send back, never causes one, and
 * reports nothing done (processed is not landed): the next cycle plans the entry again and
 * finds it cleaned up at confirmed, or cleans it if that cleanup's fork was abandoned.
 */
async function cleanedAtProcessed(s: CleanupSubmitter, indices: readonly number[], signal: AbortSignal): Promise<Set<number>> {
  if (indices.length === 0) return new Set();
  const ranges = coveringRanges(indices, DEPOSIT_ENTRY_SIZE, MAX_SLICE_BYTES);
  const head = await readEntries(
    s.rpc,
    s.target.tracker,
    ranges,
    decodeDepositEntries,
    { commitment: 'processed' },
    new ReadMeter(s.metrics),
    signal,
  );
  return new Set(indices.filter((index) => head.get(index)?.cleanupCompleted === true));
}

/** The entries at `indices` (below entry_count) at confirmed, by index. */
async function readCandidates(s: CleanupSubmitter, indices: readonly number[], signal: AbortSignal): Promise<Map<number, DepositEntry>> {
  const { tracker } = s.target;
  const meter = new ReadMeter(s.metrics);
  const { header } = await readTrackerHeader(s.rpc, tracker, 'confirmed', meter, signal);
  const entryCount = toEntryIndex(header.entryCount, tracker.account, 'entry_count');
  const present = indices.filter((index) => index < entryCount);
  const wanted = new Set(present);
  const ranges = coveringRanges(present, DEPOSIT_ENTRY_SIZE, MAX_SLICE_BYTES);
  const read = await readEntries(s.rpc, tracker, ranges, decodeDepositEntries, { commitment: 'confirmed' }, meter, signal);
  return new Map([...read].filter(([index]) => wanted.has(index)));
}

async function sendCleanups(
  s: CleanupSubmitter,
  candidates: readonly Candidate[],
  out: { report: CleanupReport; failures: Failure[] },
  signal: AbortSignal,
): Promise<void> {
  await sendBatches(
    s,
    candidates,
    {
      landed: (transaction) => {
        out.report.transactions.push(transaction);
        out.report.completed.push(...transaction.indices);
      },
      paid: (transaction) => {
        out.report.transactions.push(transaction);
      },
      failed: async (failure, job, queue) => {
        const failed = failedEntry(failure);
        const position = failed === undefined ? -1 : job.indices.indexOf(failed.index);
        if (failed === undefined || position < 0 || resendAfterRefusal(s.target.action, position) !== 'all_but_refused') throw failure;
        // Landed with an error (another payer's cleanup got there first, or a rebroadcast without
        // preflight): nothing was cleaned, but the transaction is on chain and its fee was paid.
        if (failed.signature !== undefined) out.report.transactions.push({ signature: failed.signature, indices: job.indices });
        const rest = queue.filter((candidate) => candidate.index !== failed.index);
        if (failed.programError !== 'CleanupAlreadyCompleted') {
          out.failures.push({ index: failed.index, reason: failed.reason });
          return rest;
        }
        out.report.alreadyDone.push(failed.index);
        // Another payer is cleaning the same entries (every authority's crank runs cleanup): read
        // the rest again so that all it already did drops out at once, not one refusal at a time.
        return candidatesOf(
          s,
          rest.map((candidate) => candidate.index),
          out,
          signal,
        );
      },
    },
    signal,
  );
}

/**
 * The entry a program error names, with the error's name, and the signature of the
 * transaction when it landed with that error (a preflight refusal has none).
 */
function failedEntry(
  err: BridgeError<'CHAIN__FAILED_TO_SUBMIT'>,
): { index: number; programError: string; reason: string; signature?: string } | undefined {
  const { index, programError, customCode } = err.context;
  if (index === undefined || programError === undefined) return undefined;
  const { signature } = err.context;
  const landedIn = signature === undefined ? '' : ` in transaction ${signature}`;
  const reason = `${programError} (${customCode ?? '?'})${landedIn}`;
  return { index, programError, reason, ...(signature === undefined ? {} : { signature }) };
}

function failedEntries(target: ActionTarget, failures: readonly Failure[]) {
  const listed = failures.slice(0, 5).map((failure) => `index ${failure.index}: ${failure.reason}`);
  const more = failures.length > listed.length ? `; and ${failures.length - listed.length} more` : '';
  const first = failures[0];
  return submitFailure(target, {
    outcome: 'entries_refused',
    reason: `${failures.length} entr${failures.length === 1 ? 'y' : 'ies'} could not be cleaned up (${listed.join('; ')}${more})`,
    ...(first === undefined ? {} : { index: first.index }),
  });
}
