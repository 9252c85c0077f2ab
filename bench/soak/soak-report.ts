import { readFileSync } from 'node:fs';
import { TRACKER_HEADER_SIZE } from '../../src/chain/codec/layout.js';
import { LAMPORTS_PER_SIGNATURE } from '../../devnet/bank/bank.js';
import type { ChainPair } from '../../devnet/chain-pair.js';
import { summarizeTransfers } from '../../devnet/summary.js';
import type { World } from '../../devnet/world/bootstrap.js';
import { percentile, type BenchResult, type Row } from '../report.js';
import { authorityLamports, completedTransfers } from './chain-checks.js';
import { explainingFault } from './fault-schedule.js';
import type { HealthLatency } from './health-load.js';
import type { SoakOptions } from './run-soak.js';
import { slope, type PerChain, type ServerSample } from './server-samples.js';
import { STAGE_COLUMNS, STAGE_NOTES, stageRows, type Stage, type StageLatency } from '../support/stage-latency.js';
import type { AuthorityLandings, GovernanceLanding } from './vote-watch.js';

/** The soak's end-of-run checks and its report: the targets beside the measurements. */

const MIB = 1_048_576;
const TARGETS = { steadyRssMiB: 150, busyOverIdleP99: 1.5, idleHealthP99Ms: 5 };

/** What the report needs of one bridge server. */
interface SoakServerRecord {
  index: number;
  logPath: string;
  samples: ServerSample[];
}

export interface IdleCycleCost {
  requestsPerCycle: PerChain;
  accountBytesPerRead: PerChain;
}

/**
 * What an idle cycle costs per chain, at most (docs/chain-client.md, "What an idle cycle reads"),
 * as the soak runs its servers (two endpoints per chain, BRIDGE_SOURCE_READ_COMMITMENT finalized,
 * no lease). The reads: on the source the tracker header at confirmed (with the nonce pool, one
 * getMultipleAccounts) and at finalized; on the destination the header; on each chain the
 * authority's balance, the RecentBlockhashes sysvar (what makes a history entry new) and one page
 * of its history; no entry window, since nothing is pending (entry_count = settled_prefix). Then
 * the slot probes: one getSlot per endpoint at most every SLOT_PROBE_INTERVAL_MS (2 s), started by
 * a read, so at most one round in a cycle whose reads take less than 2 s (an idle cycle's take
 * milliseconds): E per chain with E >= 2 endpoints. So, per chain:
 *   source: 2 + 3 + E   (one header read less at BRIDGE_SOURCE_READ_COMMITMENT=confirmed)
 *   destination: 1 + 3 + E   (one more, the lease account, while the lease is in use)
 * With E = 2: 7 and 6. The 10-minute soak measured exactly 7 and 6 (the bound it stated before,
 * 4 and 3 plus the probes, missed the sysvar read).
 */
const SOAK_ENDPOINTS_PER_CHAIN = 2;
export const IDLE_BOUND = {
  requests: { source: 2 + 3 + SOAK_ENDPOINTS_PER_CHAIN, target: 1 + 3 + SOAK_ENDPOINTS_PER_CHAIN },
  accountBytes: { source: 2 * TRACKER_HEADER_SIZE, target: TRACKER_HEADER_SIZE },
};

export interface ReportInput {
  pair: ChainPair;
  world: World;
  servers: SoakServerRecord[];
  /** Each authority's lamports on both chains before its server started. */
  lamportsBefore: bigint[];
  /** What each authority landed while its server ran. */
  landings: AuthorityLandings[];
  /** Governance changes that landed during the run. */
  governance: readonly GovernanceLanding[];
  options: SoakOptions;
  injected: Record<string, number>;
  traffic: { deposits: number; claims: number; errors: number };
  trafficErrors: string[];
  drained: { settled: boolean; drainMs: number };
  /** /health from autocannon: mid-run, after the drain, and with the other servers stopped. */
  health: { busy: HealthLatency | undefined; idle: HealthLatency; alone: HealthLatency };
  idle: IdleCycleCost[];
  startedMs: number;
  /** Per stage, from each deposit made during the run (bench/support/stage-latency.ts). */
  latency: Record<Stage, StageLatency>;
}

/** The servers' BRIDGE_POLL_INTERVAL_SECS (devnet/server-env.ts). */
const SOAK_POLL_INTERVAL_MS = 2_000;

export function soakReport(input: ReportInput): BenchResult {
  const { pair, world, servers, options, drained } = input;
  const { busy: busyHealth, idle: idleHealth, alone: aloneHealth } = input.health;
  const failures: string[] = [];
  const transfers = completedTransfers(pair, world);
  if (!drained.settled || transfers.completed !== transfers.total) {
    failures.push(
      `${transfers.total - transfers.completed} of ${transfers.total} transfers not completed after a ${(drained.drainMs / 1000).toFixed(0)} s drain`,
    );
  }
  const lamportsAfter = authorityLamports(pair, world);
  const serverRows: Row[] = servers.map((server, k) => {
    const { landed, landedWithError, duplicateVotes, uninspected, priorityLamports } = input.landings[k]!;
    // Base fees: what the authority spent less the priority fees its landed transactions paid.
    const feesPaid = Number((input.lamportsBefore[k]! - lamportsAfter[k]! - priorityLamports) / BigInt(LAMPORTS_PER_SIGNATURE));
    if (feesPaid !== landed) failures.push(`authority ${k}: fees paid for ${feesPaid} transactions, ${landed} landed`);
    if (duplicateVotes > 0) failures.push(`authority ${k}: ${duplicateVotes} vote(s) landed in more than one transaction`);
    if (uninspected > 0)
      failures.push(`authority ${k}: ${uninspected} landed transactions left the devnet's history before the duplicate-vote check read them`);
    const lines = errorLines(server.logPath, input.governance);
    if (lines.unexplained.length > 0)
      failures.push(`server ${k}: ${lines.unexplained.length} error lines no fault explains, first: ${lines.unexplained[0]}`);
    const memory = memoryFigures(server.samples);
    return {
      server: k,
      steadyRssMiB: memory.steadyMiB,
      peakRssMiB: memory.peakMiB,
      rssSlopeMiBPerHour: memory.slopeMiBPerHour,
      // The first scrape's histogram covers the process's start (module loading, first compilations), not its work.
      eventLoopP99Ms: percentile(
        server.samples.slice(1).map((sample) => sample.eventLoopP99Ms),
        99,
      ),
      landed,
      landedWithError,
      duplicateVotes,
      feesPaid,
      idleRpcSource: input.idle[k]?.requestsPerCycle.source ?? Number.NaN,
      idleRpcTarget: input.idle[k]?.requestsPerCycle.target ?? Number.NaN,
      idleBytesSource: input.idle[k]?.accountBytesPerRead.source ?? Number.NaN,
      idleBytesTarget: input.idle[k]?.accountBytesPerRead.target ?? Number.NaN,
      rpcPerTransfer: rpcPerTransfer(server.samples, input.traffic.deposits),
      errorLinesExplained: Object.values(lines.explained).reduce((sum, count) => sum + count, 0),
      errorLinesUnexplained: lines.unexplained.length,
      samples: server.samples.length,
    };
  });
  const summary = summarizeTransfers(pair, world);
  const healthRow = (load: string, latency: HealthLatency | undefined): Row => ({
    load,
    requests: latency?.requests ?? null,
    errors: latency?.errors ?? null,
    p50Ms: latency?.p50Ms ?? null,
    p99Ms: latency?.p99Ms ?? null,
    maxMs: latency?.maxMs ?? null,
  });
  const steadyWorst = Math.max(...serverRows.map((row) => Number(row.steadyRssMiB)));
  const busyOverIdle = busyHealth === undefined ? Number.NaN : busyHealth.p99Ms / Math.max(idleHealth.p99Ms, 1);
  return {
    name: 'soak',
    parameters: { ...options, signal: undefined, seeded: options.seededEntries },
    failures,
    tables: [
      {
        title: `Soak: ${options.minutes} min, ${options.authorities} servers (threshold ${options.threshold}), ${options.seededEntries} seeded transfers`,
        columns: [
          { key: 'what', header: 'what' },
          { key: 'value', header: 'measured' },
          { key: 'target', header: 'target' },
        ],
        rows: [
          {
            what: 'transfers during the run (deposits; completed after the drain)',
            value: `${input.traffic.deposits}; ${transfers.completed - options.seededEntries} of ${transfers.total - options.seededEntries}`,
            target: 'all',
          },
          { what: 'drain after traffic stopped', value: `${(drained.drainMs / 1000).toFixed(1)} s`, target: '-' },
          { what: 'claims, traffic errors', value: `${input.traffic.claims}, ${input.traffic.errors}`, target: '-' },
          {
            what: 'confirmed / rejected / relayed / cleaned up',
            value: `${summary.confirmed} / ${summary.rejected} / ${summary.relayed} / ${summary.cleanedUp}`,
            target: '-',
          },
          {
            what: 'governance changes landed (reset_pending on the source / set_token_pair on the destination)',
            value: `${input.governance.filter((g) => g.chain === 'source').length} / ${input.governance.filter((g) => g.chain === 'target').length}`,
            target: '-',
          },
          {
            what: 'fault phases injected (both chains)',
            value: Object.entries(input.injected)
              .map(([kind, count]) => `${kind} ×${count}`)
              .join('; '),
            target: '-',
          },
          {
            what: 'steady RSS, worst server',
            value: `${steadyWorst.toFixed(1)} MiB`,
            target: `< ${TARGETS.steadyRssMiB} MiB, flat over the second half`,
          },
          {
            what: 'idle cycle: RPC calls, account bytes read (source / destination, worst server)',
            value: `${worst(input.idle, (cost) => cost.requestsPerCycle.source).toFixed(1)} / ${worst(input.idle, (cost) => cost.requestsPerCycle.target).toFixed(1)} calls; ${worst(input.idle, (cost) => cost.accountBytesPerRead.source)} / ${worst(input.idle, (cost) => cost.accountBytesPerRead.target)} B`,
            target: `at most ${IDLE_BOUND.requests.source} / ${IDLE_BOUND.requests.target} calls; ${IDLE_BOUND.accountBytes.source} / ${IDLE_BOUND.accountBytes.target} B`,
          },
          {
            what: '/health p99 busy / idle (same server, same run)',
            value: `${busyHealth?.p99Ms ?? '-'} ms / ${idleHealth.p99Ms} ms (${busyOverIdle.toFixed(2)}x)`,
            target: `<= ${TARGETS.busyOverIdleP99}x`,
          },
          {
            what: '/health p99, the machine otherwise idle (other servers stopped, no scrapes)',
            value: `${aloneHealth.p99Ms} ms`,
            target: `< ${TARGETS.idleHealthP99Ms} ms`,
          },
        ],
      },
      {
        title: 'Per server',
        columns: [
          { key: 'server', header: 'server' },
          { key: 'steadyRssMiB', header: 'steady RSS (MiB)', digits: 1 },
          { key: 'peakRssMiB', header: 'peak RSS (MiB)', digits: 1 },
          { key: 'rssSlopeMiBPerHour', header: 'RSS slope, 2nd half (MiB/h)', digits: 1 },
          { key: 'eventLoopP99Ms', header: 'event-loop delay p99 (ms)', digits: 1 },
          { key: 'landed', header: 'landed tx' },
          { key: 'landedWithError', header: 'with error' },
          { key: 'duplicateVotes', header: 'votes landed twice' },
          { key: 'feesPaid', header: 'fees paid (tx)' },
          { key: 'idleRpcSource', header: `idle cycle RPC calls, source (bound ${IDLE_BOUND.requests.source})`, digits: 1 },
          { key: 'idleRpcTarget', header: `idle cycle RPC calls, destination (bound ${IDLE_BOUND.requests.target})`, digits: 1 },
          { key: 'idleBytesSource', header: `idle read bytes, source (bound ${IDLE_BOUND.accountBytes.source})` },
          { key: 'idleBytesTarget', header: `idle read bytes, destination (bound ${IDLE_BOUND.accountBytes.target})` },
          { key: 'rpcPerTransfer', header: 'RPC calls per transfer', digits: 1 },
          { key: 'errorLinesExplained', header: 'error lines (by a fault)' },
          { key: 'errorLinesUnexplained', header: 'unexplained' },
          { key: 'samples', header: 'samples' },
        ],
        rows: serverRows,
        notes: [
          'steady RSS: median of the second half of the samples; slope: least squares over the second half, per hour.',
          'event-loop delay p99: the 99th percentile of the per-scrape p99 (prom-client monitorEventLoopDelay, reset at each scrape every 2 s; its resolution is 10 ms), the first scrape (the process starting) left out.',
          'fees paid: lamports spent / 5000; must equal the landed transactions (with or without an error).',
          'idle cycle: RPC requests per chain over crank cycles in 10 s with nothing pending; account bytes: the latest tracker read then. The bound: each tracker header (the source one at finalized and at confirmed), the balance and one history page per chain, no entry window, plus one getSlot probe per endpoint (2 per chain).',
          'RPC calls per transfer: every request the server made during the run (idle cycles and faults included) over the deposits made.',
        ],
      },
      {
        title: `/health at ${options.healthRate} requests/s for ${options.healthSeconds} s (autocannon, a separate process)`,
        columns: [
          { key: 'load', header: 'server state' },
          { key: 'requests', header: 'requests' },
          { key: 'errors', header: 'errors' },
          { key: 'p50Ms', header: 'p50 (ms)' },
          { key: 'p99Ms', header: 'p99 (ms)' },
          { key: 'maxMs', header: 'max (ms)' },
        ],
        rows: [
          healthRow('busy: traffic and faults, mid-run', busyHealth),
          healthRow('idle: after the drain', idleHealth),
          healthRow('alone: the other servers stopped, no scrapes', aloneHealth),
        ],
      },
      {
        title: 'Transfer latency per stage (every deposit of the run, faults and governance changes included)',
        columns: STAGE_COLUMNS,
        rows: stageRows(`poll ${SOAK_POLL_INTERVAL_MS / 1000} s, soak`, input.latency, SOAK_POLL_INTERVAL_MS),
        notes: [
          ...STAGE_NOTES,
          "Sampled every 100 ms. The soak's faults (dropped and lost sends, 500s, lagging endpoints) and governance changes (each rewinds every authority; a rewound transfer keeps the stamps of the stages it had reached) are in these figures: they are what users wait under those faults, not on a healthy cluster.",
        ],
      },
    ],
    data: { servers: servers.map((server) => ({ index: server.index, samples: server.samples })), trafficErrors: input.trafficErrors.slice(0, 50) },
  };
}

function worst(costs: readonly IdleCycleCost[], figure: (cost: IdleCycleCost) => number): number {
  return Math.max(...costs.map(figure));
}

function memoryFigures(samples: readonly ServerSample[]): { steadyMiB: number; peakMiB: number; slopeMiBPerHour: number } {
  const secondHalf = samples.slice(Math.floor(samples.length / 2));
  return {
    steadyMiB: percentile(
      secondHalf.map((sample) => sample.rssBytes / MIB),
      50,
    ),
    peakMiB: Math.max(...samples.map((sample) => sample.rssBytes / MIB)),
    slopeMiBPerHour: slope(secondHalf.map((sample) => ({ x: sample.atMs / 3_600_000, y: sample.rssBytes / MIB }))),
  };
}

/** Every error or fatal line of a server's log, with the fault (or governance change) that explains it, if any. */
function errorLines(logPath: string, governance: readonly GovernanceLanding[]): { explained: Record<string, number>; unexplained: string[] } {
  const explained: Record<string, number> = {};
  const unexplained: string[] = [];
  for (const line of readFileSync(logPath, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    const record = JSON.parse(line) as { level?: string; time?: number };
    if (record.level !== 'error' && record.level !== 'fatal') continue;
    const kind = explainingFault(line) ?? explainingGovernance(line, record.time, governance);
    if (kind === undefined) unexplained.push(line.slice(0, 400));
    else explained[kind] = (explained[kind] ?? 0) + 1;
  }
  return { explained, unexplained };
}

/**
 * A governance change rewinds every authority: a vote in flight then is refused by the program
 * (VoteOutOfOrder, EntryNotFound, VoteMismatch). Such a refusal is the change's doing only while
 * the action can still be retrying it: from one poll before the change was seen to one worst-case
 * action later.
 */
const GOVERNANCE_WINDOW_MS = { before: 5_000, after: 120_000 };

export function explainingGovernance(text: string, timeMs: number | undefined, governance: readonly GovernanceLanding[]): string | undefined {
  if (timeMs === undefined || !/VoteOutOfOrder|EntryNotFound|VoteMismatch/.test(text)) return undefined;
  const near = governance.some(
    (change) => timeMs >= change.seenAtMs - GOVERNANCE_WINDOW_MS.before && timeMs <= change.seenAtMs + GOVERNANCE_WINDOW_MS.after,
  );
  return near ? 'governance change' : undefined;
}

function rpcPerTransfer(samples: readonly ServerSample[], deposits: number): number {
  const last = samples.at(-1);
  return last === undefined || deposits === 0 ? Number.NaN : (last.rpcRequests.source + last.rpcRequests.target) / deposits;
}
