import type { BridgeChains, BridgeView } from '../../chain/port/bridge-chains.js';
import type { BridgeWatch, FinalizedRequest } from '../../chain/port/bridge-watch.js';
import { CHAINS, chainName, type ChainSide } from '../../domain.js';
import { describeError } from '../../errors.js';
import type { Logger } from '../../log/logger.js';
import type { Metrics } from '../../metrics/metrics.js';
import { judge, type Candidate } from './breach-recheck.js';
import { unacknowledged, type BreachLedger } from './breach-ledger.js';
import { INVARIANTS, isCritical, raiseBaseline, viewBreaches, type Baselines, type Breach } from './invariants.js';
import { createDeploymentWatch, DEPLOYMENT_CHECK_INTERVAL_MS, type DeploymentWatch } from './deployment-watch.js';
import { limitFlow, type FlowLimit, type FlowVote, type HeldTransfer } from './flow-breaker.js';
import type { CyclePlan } from '../planning/cycle-plan.js';

/**
 * The watchdog (docs/operating.md "The watchdog"): after each cycle's read it judges the view
 * the crank already holds (no read of its own), re-checks each candidate at finalized on every
 * endpoint in service (./breach-recheck.ts, one re-check at a time, off the cycle), and pages a
 * confirmed breach: one error line naming the entry and both sides, the counter, and with
 * BRIDGE_ON_INVARIANT_BREACH=halt every vote held until the operator acknowledges it in the
 * ledger (./breach-ledger.ts). The program's deployment is ./deployment-watch.ts's.
 */

interface WatchdogSettings {
  /** BRIDGE_ON_INVARIANT_BREACH. */
  onInvariantBreach: 'halt' | 'continue';
  /** BRIDGE_<CHAIN>_PROGRAM_HASH: the sha256 (hex) the program's bytes must hash to; absent: not checked. */
  programHashes: Partial<Record<ChainSide, string>>;
  /** BRIDGE_FLOW_LIMIT_<MINT>: the flow breaker's limits; empty: no breaker. */
  flowLimits: readonly FlowLimit[];
}

/** What /health's `crank.watchdog` shows: why each chain is held, and the transfer the flow breaker holds. */
interface WatchdogView {
  held: Record<ChainSide, string | null>;
  flow_held: HeldTransfer | null;
}

/** How long a candidate may wait for finalized answers past its view before it counts as a doubt: finalized trails confirmed by ~32 slots (~13 s). */
const RECHECK_WINDOW_MS = 60_000;
/** Candidates kept at once; more in one view are judged in later re-checks (each view raises them again). */
const MAX_CANDIDATES = 16;

export interface Watchdog {
  /** Judge one cycle's view (pure, at once); a candidate starts a re-check off the cycle. */
  observe(view: BridgeView): void;
  /** Why signing is held on each chain now; null: not held. */
  holds(): Record<ChainSide, string | null>;
  /** The plan with its ack_deposit votes cut where the flow breaker holds them (./flow-breaker.ts). */
  limitFlow(plan: CyclePlan): CyclePlan;
  view(): WatchdogView;
  /** Resolves once the re-check running now (if any) has ended: tests and shutdown. */
  settled(): Promise<void>;
  stop(): void;
}

export interface WatchdogOptions {
  settings: WatchdogSettings;
  watch: BridgeWatch;
  ledger: BreachLedger;
  authority: string;
  logger: Logger;
  metrics: Metrics;
  /** The deployment read's cadence (ms); DEPLOYMENT_CHECK_INTERVAL_MS in production. */
  deploymentIntervalMs: number;
  /** One re-check's reads at most (ms): the client's bound on a round of reads. */
  readTimeoutMs: number;
}

/** What the wiring hands the crank: the settings (CrankConfig's `watchdog`) and where breaches are kept. */
export interface WatchdogWiring {
  config: WatchdogSettings;
  ledger: BreachLedger;
  /** Tests only: the deployment read more often than DEPLOYMENT_CHECK_INTERVAL_MS. */
  deploymentIntervalMs?: number;
}

/** The watchdog over the crank's views, when the chains offer its reads and the wiring its settings. */
export function watchdogOver(
  chains: BridgeChains,
  wiring: WatchdogWiring | undefined,
  deps: Pick<WatchdogOptions, 'logger' | 'metrics' | 'readTimeoutMs'>,
): Watchdog | undefined {
  if (chains.watch === undefined || wiring === undefined) return undefined;
  return createWatchdog({
    ...deps,
    settings: {
      onInvariantBreach: wiring.config.onInvariantBreach,
      programHashes: wiring.config.programHashes,
      flowLimits: wiring.config.flowLimits,
    },
    watch: chains.watch,
    ledger: wiring.ledger,
    authority: chains.authority,
    deploymentIntervalMs: wiring.deploymentIntervalMs ?? DEPLOYMENT_CHECK_INTERVAL_MS,
  });
}

function createWatchdog(options: WatchdogOptions): Watchdog {
  const { settings, watch, ledger, metrics } = options;
  const log = options.logger.child({ component: 'watchdog' });
  const candidates = new Map<string, Candidate>();
  /** Refuted ids and when: not re-checked again within RECHECK_WINDOW_MS (a lying node serving it every cycle). */
  const refuted = new Map<string, number>();
  const raised = new Set<string>(ledger.state().breaches.keys());
  const baselines: Partial<Baselines> = {};
  let running: Promise<void> = Promise.resolve();
  let busy = false;
  let stopped = false;
  const flowLimits = new Map(settings.flowLimits.map((limit) => [limit.mint, limit]));
  const flowVotes = new Map<number, FlowVote>();
  let flowHeld: HeldTransfer | null = null;
  for (const mint of flowLimits.keys()) metrics.flowHeld.set({ mint }, 0);
  const deployments: DeploymentWatch = createDeploymentWatch({
    watch,
    programHashes: settings.programHashes,
    logger: log,
    metrics,
    intervalMs: options.deploymentIntervalMs,
  });
  for (const invariant of INVARIANTS) {
    metrics.invariantBreaches.inc({ invariant }, 0);
    metrics.invariantDoubts.inc({ invariant }, 0);
  }
  metrics.watchdogHalted.set(halting() === undefined ? 0 : 1);

  function halting(): Breach | undefined {
    if (settings.onInvariantBreach !== 'halt') return undefined;
    return unacknowledged(ledger.state()).find((breach) => isCritical(breach.invariant));
  }

  function observe(view: BridgeView): void {
    const now = Date.now();
    for (const [id, at] of refuted) if (now - at > RECHECK_WINDOW_MS) refuted.delete(id);
    const acknowledged = ledger.state().acknowledged;
    for (const breach of viewBreaches(view, baselines)) {
      if (
        raised.has(breach.id) ||
        acknowledged.has(breach.id) ||
        refuted.has(breach.id) ||
        candidates.has(breach.id) ||
        candidates.size >= MAX_CANDIDATES
      )
        continue;
      const baseline = breach.index === null ? baselines[breach.chain] : undefined;
      candidates.set(breach.id, { breach, slots: { ...view.slots }, seenAtMs: now, ...(baseline === undefined ? {} : { baseline }) });
    }
    baselines.source = raiseBaseline(baselines.source, view.deposits.header);
    baselines.target = raiseBaseline(baselines.target, view.withdrawals.header);
    if (candidates.size > 0 && !busy && !stopped) {
      busy = true;
      running = recheck(view.authority).finally(() => (busy = false));
    }
  }

  async function recheck(authority: string): Promise<void> {
    const request: FinalizedRequest = { source: [], target: [] };
    const indices = new Set<number>();
    for (const { breach } of candidates.values()) if (breach.index !== null) indices.add(breach.index);
    request.source = [...indices];
    request.target = [...indices];
    let answers: Awaited<ReturnType<BridgeWatch['readFinalized']>>;
    try {
      answers = await watch.readFinalized(request, AbortSignal.timeout(options.readTimeoutMs));
    } catch (err) {
      log.warn(
        { err: describeError(err), candidates: [...candidates.keys()] },
        'watchdog: the finalized re-check of a breach candidate failed; the next cycle tries again',
      );
      return;
    }
    const now = Date.now();
    for (const [id, candidate] of candidates) {
      const verdict = judge(candidate, answers, authority);
      if (verdict === 'confirmed') {
        candidates.delete(id);
        raise(candidate.breach);
      } else if (verdict === 'refuted' || now - candidate.seenAtMs > RECHECK_WINDOW_MS) {
        candidates.delete(id);
        refuted.set(id, now);
        metrics.invariantDoubts.inc({ invariant: candidate.breach.invariant });
        log.warn(
          {
            breach: id,
            invariant: candidate.breach.invariant,
            chain: candidate.breach.chain,
            entry: candidate.breach.index,
            verdict: verdict === 'refuted' ? 'refuted' : 'not_final_in_time',
          },
          'watchdog: a breach one view showed is not what every endpoint shows at finalized; not raised (a lying or lagging node, or not final in time)',
        );
      }
    }
  }

  function raise(breach: Breach): void {
    raised.add(breach.id);
    metrics.invariantBreaches.inc({ invariant: breach.invariant });
    const fields = {
      breach: breach.id,
      invariant: breach.invariant,
      chain: breach.chain,
      entry: breach.index,
      bridge: breach.bridge,
      expected: breach.expected,
    };
    const where = breach.index === null ? `the ${chainName(breach.chain)} tracker` : `${chainName(breach.chain)} entry ${breach.index}`;
    const message = `bridge invariant ${breach.invariant} broken at ${where}: the bridge shows ${breach.bridge}; expected ${breach.expected}`;
    if (!isCritical(breach.invariant)) {
      log.warn(fields, message);
      return;
    }
    if (settings.onInvariantBreach === 'halt') {
      ledger.record({ kind: 'breach', ...breach });
      metrics.watchdogHalted.set(1);
      log.error(
        { ...fields, onInvariantBreach: 'halt' },
        `${message}; this authority votes nothing further until an operator runs: npm run ops -- acknowledge ${breach.id}`,
      );
    } else {
      log.error({ ...fields, onInvariantBreach: 'continue' }, message);
    }
  }

  function holds(): Record<ChainSide, string | null> {
    const halt = halting();
    metrics.watchdogHalted.set(halt === undefined ? 0 : 1);
    const program = deployments.holds();
    const held = {} as Record<ChainSide, string | null>;
    for (const chain of CHAINS) {
      held[chain] = halt !== undefined ? `halted on breach ${halt.id} until: npm run ops -- acknowledge ${halt.id}` : program[chain];
    }
    return held;
  }

  function flow(plan: CyclePlan): CyclePlan {
    // Nothing to vote (or the chain held): the hold, if any, stands as it was.
    if (plan.ackDeposit.votes.length === 0) return plan;
    const limited = limitFlow(plan, flowLimits, flowVotes, ledger.state().released, Date.now());
    const before = flowHeld;
    flowHeld = limited.held;
    if (before !== null && before.id !== flowHeld?.id) {
      metrics.flowHeld.set({ mint: before.mint }, 0);
      log.info({ hold: before.id }, `watchdog: the flow breaker lets ${before.id} through (released, or the window allows it)`);
    }
    if (flowHeld !== null && flowHeld.id !== before?.id) {
      metrics.flowHeld.set({ mint: flowHeld.mint }, 1);
      const { id, index, mint, amount, carried, limit, window_hours: hours } = flowHeld;
      log.error(
        { hold: id, entry: index, mint, amount, carried, limit, windowHours: hours },
        `watchdog: the flow breaker holds ack_deposit votes at destination entry ${index}: ${amount} of ${mint} would pass ${carried} already voted within ${hours} h over the limit ${limit}; votes wait in order until the window allows it or: npm run ops -- flow release ${id}`,
      );
    }
    return limited.plan;
  }

  return {
    observe,
    holds,
    limitFlow: flow,
    view: () => ({ held: holds(), flow_held: flowHeld }),
    settled: () => running,
    stop: () => {
      stopped = true;
      deployments.stop();
    },
  };
}
