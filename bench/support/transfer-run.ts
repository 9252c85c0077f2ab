import type { Keypair } from '@solana/web3.js';
import { sleep } from '../../src/time.js';
import { percentile } from '../report.js';
import { startBenchWorld, type BenchWorld } from './bench-world.js';
import { counterTotal, startBenchCranks, stopBenchCranks, type BenchCrank, type CounterName, type TimingProfile } from './cranks.js';
import { closedPortUrl } from '../../devnet/rpc/silent-endpoints.js';
import { armFaults, type FaultPlan, type InjectedFaults } from './fault-plan.js';
import { TransferProgress } from './progress.js';
import { accountAuthority, type AuthorityAccount, type SentAction } from './sent-transactions.js';
import { claim, deposit, fundUsers, type Deposit } from './users.js';

/**
 * One measured run: a devnet bridge, `deposits` transfers waiting on the source chain (a
 * backlog, as after an outage or a burst), then three cranks (threshold 2) start and carry them
 * through all five phases while the users claim their Confirmed withdrawals. The clock starts
 * when the cranks start and stops when every deposit is cleaned up and every authority has cast
 * its votes (late ones included).
 *
 * How cycles are driven:
 * - `rounds`: the bench calls runOnce() on authority 0, 1, 2, 0, ... back to back (one
 *   authority at a time once the three startup cycles are over, no poll interval): the cost of
 *   the work itself, and a count of the rounds it takes.
 * - `timers`: each crank runs on its own poll timer (`pollIntervalMs`), all three at once, as
 *   deployed servers do: their contention (votes planned from a view another authority just
 *   changed) and the poll interval are part of the result.
 */

export type Drive = 'rounds' | 'timers';

export interface TransferRunOptions {
  deposits: number;
  drive: Drive;
  /** `timers` only: the cranks' poll interval (BRIDGE_POLL_INTERVAL_SECS in ms). */
  pollIntervalMs?: number;
  timing: TimingProfile;
  faults?: FaultPlan;
  /** The run stops at this budget and reports what it completed. */
  budgetMs: number;
  signal: AbortSignal;
}

interface BatchStats {
  transactions: number;
  instructions: number;
}

/** Summed over the three cranks' metrics. */
interface CrankCounters {
  cycles: number;
  /** Cycles whose read failed or with an action that failed after every attempt. */
  failedCycles: number;
  /** Action attempts after a failed one (bridge_crank_retries_total). */
  retries: number;
  rebroadcasts: number;
  resigns: number;
  /** RPC errors the cranks saw, by kind (http: non-2xx; rpc: a JSON-RPC error such as a preflight refusal). */
  httpErrors: number;
  otherRpcErrors: number;
}

export interface TransferRunResult {
  deposits: number;
  /** Transfers cleaned up within the budget. */
  completed: number;
  /** From the cranks' start until every deposit was cleaned up (NaN when not within the budget). */
  cleanedUpMs: number;
  /** Until every authority's late votes were cast as well. */
  settledMs: number;
  /** Per-transfer completion: from the cranks' start to the transfer's cleanup. */
  latencyMs: { p50: number; p95: number; max: number };
  rounds: number | null;
  counters: CrankCounters;
  /** Process CPU time (user + system) over wall time while the cranks ran, in % of one core. */
  cpuPercent: number;
  batches: Record<SentAction, BatchStats>;
  authorities: AuthorityAccount[];
  injected: InjectedFaults;
  /** Crank lines logged at error level (failed tracker reads, actions that gave up after every attempt). */
  errorLines: number;
  problems: string[];
}

const USERS = 4;
const SAMPLE_INTERVAL_MS = 10;
const HOUR_MS = 3_600_000;
const DEFAULT_POLL_INTERVAL_MS = 1_000;
const CAPACITY_MARGIN = 16;

export async function runTransfers(options: TransferRunOptions): Promise<TransferRunResult> {
  const bench = await startBenchWorld({ capacity: options.deposits + CAPACITY_MARGIN, signal: options.signal });
  try {
    const users = fundUsers(bench, USERS);
    await depositAll(bench, users, options.deposits, options.signal);
    return await measure(bench, users, options);
  } finally {
    await bench.close();
  }
}

/** Three deposits in four on the normal pair (Confirmed in full), one on the low-limit pair (the first Confirmed in part, then Rejected). */
function transferOf(bench: BenchWorld, i: number): Deposit {
  const { normal, lowLimit } = bench.world.tokenPairs;
  return i % 4 === 3 ? { amount: 1_500n, sourceMint: lowLimit.sourceMint } : { amount: 1_000n + BigInt(i), sourceMint: normal.sourceMint };
}

async function depositAll(bench: BenchWorld, users: Keypair[], count: number, signal: AbortSignal): Promise<void> {
  await Promise.all(
    users.map(async (user, u) => {
      for (let i = u; i < count; i += users.length) await deposit(bench, user, transferOf(bench, i), signal);
    }),
  );
}

async function measure(bench: BenchWorld, users: Keypair[], options: TransferRunOptions): Promise<TransferRunResult> {
  const budget = AbortSignal.any([options.signal, AbortSignal.timeout(options.budgetMs)]);
  const progress = new TransferProgress(bench, options.deposits);
  const faults = armFaults(bench, options.faults ?? {});
  const started = performance.now();
  const cpuAtStart = process.cpuUsage();
  const deadPrimaryUrl = options.faults?.deadPrimary === true ? await closedPortUrl() : undefined;
  const cranks = startBenchCranks(bench, {
    timing: options.timing,
    pollIntervalMs: options.drive === 'rounds' ? HOUR_MS : (options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS),
    beforeSend: faults.beforeSend,
    ...(deadPrimaryUrl === undefined ? {} : { deadPrimaryUrl }),
  });
  const done = new AbortController();
  const running = AbortSignal.any([budget, done.signal]);
  let rounds = 0;
  let settledAt = Number.NaN;
  let injected: InjectedFaults;
  try {
    await Promise.all([
      watch(progress, running, () => {
        settledAt = performance.now();
        done.abort(new Error('settled'));
      }),
      claimLoop(bench, users, progress, running),
      options.drive === 'rounds' ? driveRounds(cranks, running, () => (rounds += 1)) : Promise.resolve(),
    ]);
  } finally {
    await stopBenchCranks(cranks);
    injected = faults.disarm();
  }
  options.signal.throwIfAborted();
  const cpu = process.cpuUsage(cpuAtStart);
  const cpuPercent = ((cpu.user + cpu.system) / 1000 / (performance.now() - started)) * 100;
  return summarize(bench, cranks, progress, { options, started, settledAt, rounds, injected, cpuPercent });
}

/** Samples the ledger until the run is settled or stopped. */
async function watch(progress: TransferProgress, signal: AbortSignal, onSettled: () => void): Promise<void> {
  while (!signal.aborted) {
    if (progress.sample().settled) {
      onSettled();
      return;
    }
    await sleep(SAMPLE_INTERVAL_MS, signal).catch(() => undefined);
  }
}

/** The users claim every Confirmed withdrawal as soon as it is claimable (rule 3.1 waits for it). */
export async function claimLoop(bench: BenchWorld, users: Keypair[], progress: TransferProgress, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    for (const index of progress.sample().claimable) {
      if (signal.aborted) return;
      await claim(bench, users[index % users.length]!, index, signal).catch((err: unknown) => {
        if (!signal.aborted) throw err;
      });
    }
    await sleep(SAMPLE_INTERVAL_MS, signal).catch(() => undefined);
  }
}

async function driveRounds(cranks: readonly BenchCrank[], signal: AbortSignal, onRound: () => void): Promise<void> {
  while (!signal.aborted) {
    for (const crank of cranks) {
      try {
        await crank.service.runOnce(signal);
      } catch (err) {
        if (signal.aborted) return;
        throw err;
      }
    }
    onRound();
  }
}

interface RunFacts {
  options: TransferRunOptions;
  started: number;
  settledAt: number;
  rounds: number;
  injected: InjectedFaults;
  cpuPercent: number;
}

async function summarize(bench: BenchWorld, cranks: readonly BenchCrank[], progress: TransferProgress, facts: RunFacts): Promise<TransferRunResult> {
  const { options, started } = facts;
  const completions: number[] = [];
  for (let index = 0; index < options.deposits; index++) {
    const at = progress.cleanedUpAt(index);
    if (at !== undefined) completions.push(at - started);
  }
  const completed = completions.length;
  const authorities = cranks.map((crank) => accountAuthority(bench, crank.sent, crank.slot, crank.startLamports));
  const problems = authorities.flatMap((authority) => authority.problems);
  if (Number.isNaN(facts.settledAt)) {
    problems.push(`${completed} of ${options.deposits} transfers cleaned up and not every late vote cast within ${options.budgetMs / 1000} s`);
  }
  return {
    deposits: options.deposits,
    completed,
    cleanedUpMs: completed === options.deposits ? Math.max(...completions) : Number.NaN,
    settledMs: facts.settledAt - started,
    latencyMs: { p50: percentile(completions, 50), p95: percentile(completions, 95), max: Math.max(...completions) },
    rounds: options.drive === 'rounds' ? facts.rounds : null,
    counters: await crankCounters(cranks),
    cpuPercent: facts.cpuPercent,
    batches: batchStats(authorities),
    authorities,
    injected: facts.injected,
    errorLines: cranks.reduce((sum, crank) => sum + crank.errorLines.length, 0),
    problems,
  };
}

async function crankCounters(cranks: readonly BenchCrank[]): Promise<CrankCounters> {
  const total = async (name: CounterName, labels: Record<string, string> = {}) =>
    (await Promise.all(cranks.map((crank) => counterTotal(crank.metrics, name, labels)))).reduce((sum, value) => sum + value, 0);
  const rpcErrors = await total('rpcErrors');
  const httpErrors = await total('rpcErrors', { kind: 'http' });
  return {
    cycles: await total('crankCycles'),
    failedCycles: await total('crankCycles', { outcome: 'error' }),
    retries: await total('crankRetries'),
    rebroadcasts: await total('transactionRebroadcasts'),
    resigns: await total('transactionResigns'),
    httpErrors,
    otherRpcErrors: rpcErrors - httpErrors,
  };
}

function batchStats(authorities: readonly AuthorityAccount[]): Record<SentAction, BatchStats> {
  const stats = (action: SentAction): BatchStats => ({
    transactions: authorities.reduce((sum, authority) => sum + authority.byAction[action].landed, 0),
    instructions: authorities.reduce((sum, authority) => sum + authority.byAction[action].instructions, 0),
  });
  return { ack_deposit: stats('ack_deposit'), ack_withdraw: stats('ack_withdraw'), cleanup_deposit: stats('cleanup_deposit') };
}
