import { Registry } from 'prom-client';
import { assembleCrank } from '../../../src/assemble-crank.js';
import type { AuthoritySigner } from '../../../src/signer/authority-signer.js';
import type { PriorityFeeBounds } from '../../../src/chain/client/budget/priority-fee.js';
import type { SubmitTiming } from '../../../src/chain/client/submit/transaction-sender.js';
import type { CrankConfig } from '../../../src/config/config.js';
import type { RpcFetch } from '../../../src/chain/rpc/rpc-fetch.js';
import type { CrankService } from '../../../src/machines/crank-service.js';
import type { CrankReport } from '../../../src/machines/crank-types.js';
import { createMetrics, type Metrics } from '../../../src/metrics/metrics.js';
import { authorityParts } from '../../support/authority.js';
import { captureLogs, type CapturedLogs } from '../../support/log-capture.js';
import type { PairLamports } from '../../support/base-fees.js';
import { authorityBalances } from './chain-state.js';
import type { DevnetBridge } from './devnet-bridge.js';
import { waitFor } from '../../support/wait-for.js';

/**
 * Bridge servers minus the HTTP layer: per authority, the crank src/index.ts runs (assembleCrank
 * on a configuration parsed as the server parses its environment), with fast confirmation
 * polling, its own metrics registry and captured logs.
 */

export interface BridgeCrank {
  /** The authority slot k this crank signs for. */
  slot: number;
  service: CrankService;
  metrics: Metrics;
  logs: CapturedLogs;
  /** This authority's lamports when its crank started, to count the transactions it paid for. */
  startBalances: PairLamports;
  /** The devnet it runs on: a round waits for its banks (runRound). */
  bridge: DevnetBridge;
}

export interface CrankTuning {
  /** Long by default: tests drive cycles with runOnce unless the crank's own timers are the point. */
  pollIntervalMs?: number;
  maxAttempts?: number;
  retryBackoffMs?: number;
  rpcTimeoutMs?: number;
  /** How long one transaction is watched before the action gives up on it (it stays pending). */
  confirmTimeoutMs?: number;
  /** The fetch under the crank's RPC transport (a RequestGate's, to hold one request). */
  fetch?: RpcFetch;
  /** Endpoints of each chain, primary first, instead of the devnet node's one URL. */
  sourceRpcUrls?: readonly string[];
  targetRpcUrls?: readonly string[];
  /** BRIDGE_DRY_RUN. */
  dryRun?: boolean;
  /**
   * The production confirmation timing (450 ms polls, 2 s rebroadcasts, 120 s cap) instead of
   * the fast one, so that blockhash expiry, not a short timeout, ends an unlanded transaction.
   */
  productionTiming?: boolean;
  /** The authority key: the slot's keypair file by default, or a PKCS#11 token's signer. */
  signer?: AuthoritySigner;
  /** BRIDGE_PRIORITY_FEE_MIN/MAX_MICROLAMPORTS; the defaults (0, 100,000) when absent. */
  priorityFee?: PriorityFeeBounds;
  /** The watchdog's deployment read this often instead of every 60 s. */
  deploymentIntervalMs?: number;
  /** Any other setting (BRIDGE_ON_FOREIGN_SIGNER, BRIDGE_HANDOFF_SECS, ...), applied last. */
  config?: Partial<CrankConfig>;
}

const FAST_SUBMIT: SubmitTiming = { pollIntervalMs: 10, rebroadcastIntervalMs: 100, confirmTimeoutMs: 10_000 };
const STOP_DEADLINE_MS = 2_000;

export function startBridgeCrank(bridge: DevnetBridge, slot: number, tuning: CrankTuning = {}): BridgeCrank {
  const metrics = createMetrics(new Registry());
  const logs = captureLogs('info');
  const startBalances = authorityBalances(bridge, slot);
  const service = assembleCrank({
    ...(tuning.deploymentIntervalMs === undefined ? {} : { deploymentIntervalMs: tuning.deploymentIntervalMs }),
    ...authorityParts(bridge.world, slot, bridge.authorities[slot]!, {
      config: {
        pollIntervalMs: tuning.pollIntervalMs ?? 3_600_000,
        maxAttempts: tuning.maxAttempts ?? 3,
        retryBackoffMs: tuning.retryBackoffMs ?? 20,
        rpcTimeoutMs: tuning.rpcTimeoutMs ?? 5_000,
        dryRun: tuning.dryRun ?? false,
        ...(tuning.priorityFee === undefined ? {} : { priorityFee: tuning.priorityFee }),
        ...(tuning.sourceRpcUrls === undefined
          ? {}
          : { sourceRpcUrl: tuning.sourceRpcUrls[0]!, sourceRpcFallbackUrls: tuning.sourceRpcUrls.slice(1) }),
        ...(tuning.targetRpcUrls === undefined
          ? {}
          : { targetRpcUrl: tuning.targetRpcUrls[0]!, targetRpcFallbackUrls: tuning.targetRpcUrls.slice(1) }),
        ...tuning.config,
      },
      ...(tuning.signer === undefined ? {} : { signer: tuning.signer }),
      logger: logs.logger,
      metrics,
      tuning: {
        ...(tuning.productionTiming === true
          ? {}
          : { submitTiming: { ...FAST_SUBMIT, confirmTimeoutMs: tuning.confirmTimeoutMs ?? FAST_SUBMIT.confirmTimeoutMs } }),
        ...(tuning.fetch === undefined ? {} : { fetch: tuning.fetch }),
      },
    }),
  });
  bridge.onClose(() => service.stop(STOP_DEADLINE_MS));
  return { slot, service, metrics, logs, startBalances, bridge };
}

/**
 * One crank per authority slot, each past its startup cycle (the machine starts with a cycle;
 * a runOnce made meanwhile is answered by the next one), so that the tests' own cycles are the
 * only ones that run.
 */
export async function startBridgeCranks(bridge: DevnetBridge, slots: readonly number[], tuning: CrankTuning = {}): Promise<BridgeCrank[]> {
  const cranks = slots.map((slot) => startBridgeCrank(bridge, slot, tuning));
  await Promise.all(cranks.map((crank) => crank.service.runOnce()));
  // The first round waits until the finalized banks hold the setup and this first cycle: on Agave's
  // banks the first cycle may have read the setup's deposits before they finalized.
  markActed(bridge);
  return cranks;
}

/**
 * Authority 0's crank on the devnet's configuration with `config` over it (a 2 s RPC timeout,
 * the server's own submit timing), past its startup cycle: how a misconfigured endpoint or
 * program shows in /health and the metrics after one cycle.
 */
export async function startConfiguredCrank(
  bridge: DevnetBridge,
  config: Partial<CrankConfig>,
): Promise<{ service: CrankService; metrics: Metrics; logs: CapturedLogs }> {
  const metrics = createMetrics(new Registry());
  const logs = captureLogs('info');
  const service = assembleCrank(
    authorityParts(bridge.world, 0, bridge.authorities[0]!, { config: { rpcTimeoutMs: 2_000, ...config }, logger: logs.logger, metrics }),
  );
  bridge.onClose(() => service.stop(STOP_DEADLINE_MS));
  await service.runOnce();
  return { service, metrics, logs };
}

/** Per devnet, each chain's head when the last round that acted ended: what the next round waits to see finalized. */
const actedAt = new WeakMap<DevnetBridge, { source: number; target: number }>();

/**
 * One cycle of each crank, one after the other, in the given order: a deterministic round. On
 * Agave-like banks a round after one that acted first waits until both chains' finalized banks
 * hold what it wrote (a server polling at production pace sees it a poll or two later; the
 * source is read at finalized): bounded by twice the finalized lag in slots, plus 2 s.
 */
export async function runRound(cranks: readonly BridgeCrank[]): Promise<CrankReport[]> {
  const bridge = cranks[0]?.bridge;
  if (bridge !== undefined) await finalizedReached(bridge, actedAt.get(bridge));
  const reports: CrankReport[] = [];
  for (const crank of cranks) reports.push(await crank.service.runOnce());
  if (bridge !== undefined && reports.some(acted)) markActed(bridge);
  return reports;
}

function markActed(bridge: DevnetBridge): void {
  actedAt.set(bridge, { source: bridge.pair.source.bank.slot, target: bridge.pair.target.bank.slot });
}

function acted(report: CrankReport): boolean {
  return report.ack_deposit_attempted || report.ack_withdraw_attempted || report.cleanup_attempted > 0;
}

async function finalizedReached(bridge: DevnetBridge, marks: { source: number; target: number } | undefined): Promise<void> {
  if (marks === undefined) return;
  const { source, target } = bridge.pair;
  const lagSlots = Math.max(source.bank.commitmentLags.finalizedLagSlots, target.bank.commitmentLags.finalizedLagSlots);
  if (lagSlots === 0) return;
  await waitFor(() => source.bank.slotOf('finalized') >= marks.source && target.bank.slotOf('finalized') >= marks.target, {
    timeoutMs: 2 * lagSlots * Math.max(source.bank.slotIntervalMs, target.bank.slotIntervalMs) + 2_000,
    what: `the finalized banks to reach slots ${marks.source} (source) and ${marks.target} (destination)`,
  });
}

/**
 * Waits until both chains' finalized banks hold what their heads hold now: after a step whose
 * effect the next cycle must see at every commitment (a test that pins each cycle's outcome).
 * At once on a devnet without lags; bounded as runRound's wait.
 */
export async function banksCaughtUp(bridge: DevnetBridge): Promise<void> {
  await finalizedReached(bridge, { source: bridge.pair.source.bank.slot, target: bridge.pair.target.bank.slot });
}

export const NOTHING_ATTEMPTED: CrankReport = {
  ack_deposit_attempted: false,
  ack_withdraw_attempted: false,
  cleanup_attempted: 0,
  cleanup_completed: 0,
};

/** Signatures of every transaction the crank logged as landed (attempt lines carry them). */
export function loggedSignatures(crank: BridgeCrank): string[] {
  return crank.logs
    .records()
    .filter((record) => typeof record.action === 'string' && typeof record.outcome === 'string' && Array.isArray(record.signatures))
    .flatMap((record) => record.signatures as string[]);
}

/** Every `error` line the crank wrote (what pages an on-call). */
export function errorLines(crank: BridgeCrank): Array<Record<string, unknown>> {
  return crank.logs.records().filter((record) => record['level'] === 'error');
}

/** The error of every failed action attempt the crank logged, in order. */
export function failedAttemptErrors(crank: BridgeCrank): string[] {
  return crank.logs
    .records()
    .filter((record) => typeof record.action === 'string' && record.outcome === 'failed')
    .map((record) => String((record.err as { message?: unknown } | undefined)?.message));
}
