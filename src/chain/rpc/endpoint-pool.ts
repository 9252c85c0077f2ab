import { Connection } from '@solana/web3.js';
import { BrokenCircuitError, circuitBreaker, ConsecutiveBreaker, handleWhen, noop, type IPolicy } from 'cockatiel';
import { BridgeError, isBridgeError, type RpcFailureKind } from '../../errors.js';
import { isEndpointRefusal, MIN_CONTEXT_SLOT_NOT_REACHED } from '../../failure-policy.js';
import type { Logger } from '../../log/logger.js';
import type { Metrics } from '../../metrics/metrics.js';
import { chainName, chainVariables, type ChainSide } from '../../domain.js';
import { sleep } from '../../time.js';
import {
  chainGenesis,
  endpointLabels,
  foreignEndpoints,
  isWaiting,
  probeDue,
  readOrder,
  sendTargets,
  demotionOf,
  type ChoiceSettings,
  type EndpointKnowledge,
} from './endpoint-choice.js';
import { isRetryableReadFailure } from './read-retry.js';
import { classifyRpcError, RETRY_AFTER_MAX_MS, rpcFailure } from './rpc-failure.js';
import { createRpcFetch, TRANSPORT_FAILURE_KINDS, withCallSignal, type RpcFetch } from './rpc-fetch.js';
import { SlotView } from './slot-view.js';

/**
 * The endpoints of one chain (primary first), their circuit breakers, slot knowledge, refusals,
 * Retry-After waits and history capability, and the per-endpoint metrics. Which endpoint
 * serves is decided by ./endpoint-choice.ts.
 */

/** Consecutive transient failures that take an endpoint out. */
export const BREAKER_FAILURES = 3;
/** How long an endpoint stays out before one request probes it again (half-open). */
export const BREAKER_HALF_OPEN_MS = 10_000;
/** Slot probes (one getSlot per endpoint) at most this often, and only while reads happen. */
const SLOT_PROBE_INTERVAL_MS = 2_000;
/** A slot that has not advanced for this long, while another endpoint's has, is frozen. */
const SLOT_FROZEN_AFTER_MS = 10_000;
/**
 * How long after its latest refusal (HTTP 401, 403 or 404, to a call or a slot probe) an
 * endpoint stays out before a call tries it again; that call's answer ends the refusal.
 */
export const REFUSAL_HOLD_MS = 60_000;
/** How long an endpoint that answered -32011 (no history) gets no history read before one asks it again. */
const HISTORY_RECHECK_MS = 10 * 60_000;
/** A genesis hash: 32 bytes in base58. Anything else is no answer. */
const GENESIS_HASH = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

// Failures that mean the endpoint did not answer (with HTTP 5xx below); a JSON-RPC error, a 429
// or another 4xx is an answer.
const UNANSWERED_KINDS: ReadonlySet<RpcFailureKind> = new Set(['timeout', 'network', 'tls', 'malformed', 'too_large']);

export interface Endpoint {
  readonly index: number;
  /** Origin (and #k when two share one): for metrics, logs and messages. Never the path or query. */
  readonly label: string;
  readonly url: string;
  readonly rpcFetch: RpcFetch;
  readonly connection: Connection;
  readonly breaker: IPolicy;
}

export interface EndpointPoolOptions {
  chain: ChainSide;
  urls: readonly string[];
  timeoutMs: number;
  maxSlotLag: number;
  metrics: Metrics;
  /** Told once per change when an endpoint refuses us or serves again, and when history comes or goes. */
  logger?: Logger;
  fetch?: RpcFetch;
  now?: () => number;
}

/**
 * An endpoint's cluster identity: the genesis hash it answered (kept until a new answer), and
 * whether it is to be asked (`due`: never answered, or back from an outage), being asked, or known.
 */
interface ClusterKnowledge {
  genesis: string | undefined;
  ask: 'due' | 'asking' | 'known';
}

/** What the pool knows of an endpoint's transaction history. */
interface HistoryKnowledge {
  /** When it last answered -32011; undefined while it is not known to lack history. */
  lackingSince: number | undefined;
}

export class EndpointPool {
  readonly endpoints: readonly Endpoint[];
  private readonly knowledge: EndpointKnowledge[];
  private readonly openedAt: (number | undefined)[];
  /** The HTTP status and time of an endpoint's latest refusal, until it serves again. */
  private readonly refusals: ({ status: number; at: number } | undefined)[];
  private readonly history: HistoryKnowledge[];
  private readonly clusters: ClusterKnowledge[];
  private historyAvailable: boolean | undefined;
  /** Each endpoint's slot claims, judged, and the floor reads carry (./slot-view.ts). */
  private readonly slots: SlotView;
  private readonly settings: ChoiceSettings;
  private lastProbeAt: number | undefined;
  private readonly now: () => number;
  /** Endpoints whose refused Retry-After was logged: once per endpoint and process. */
  private readonly retryAfterLogged = new Set<number>();
  /** Republishes bridge_rpc_endpoint_up when an endpoint's Retry-After wait ends (at most RETRY_AFTER_MAX_MS away). */
  private readonly waitEnds: (NodeJS.Timeout | undefined)[];

  constructor(private readonly options: EndpointPoolOptions) {
    const { chain, urls, metrics } = options;
    this.now = options.now ?? Date.now;
    this.settings = { maxSlotLag: options.maxSlotLag, frozenAfterMs: SLOT_FROZEN_AFTER_MS };
    const labels = endpointLabels(urls);
    this.openedAt = urls.map(() => undefined);
    this.waitEnds = urls.map(() => undefined);
    this.refusals = urls.map(() => undefined);
    this.history = urls.map(() => ({ lackingSince: undefined }));
    this.clusters = urls.map(() => ({ genesis: undefined, ask: 'due' }));
    this.knowledge = urls.map((_, index) => ({ index, open: false, silent: false, foreign: false, notBefore: undefined, slot: undefined, ahead: false, advancedAt: undefined }));
    this.slots = new SlotView({ chain, labels, maxSlotLag: options.maxSlotLag, metrics, now: this.now, ...(options.logger === undefined ? {} : { logger: options.logger }) });
    this.endpoints = urls.map((url, index) => {
      const label = labels[index]!;
      // At 0 from the start for each kind, so that a panel or an increase() sees the first failure.
      for (const kind of TRANSPORT_FAILURE_KINDS) metrics.rpcEndpointErrors.inc({ chain, endpoint: label, kind }, 0);
      metrics.rpcEndpointClusterMismatches.inc({ chain, endpoint: label }, 0);
      const onFailure = (kind: RpcFailureKind) => metrics.rpcEndpointErrors.inc({ chain, endpoint: label, kind });
      const rpcFetch = createRpcFetch({ chain, timeoutMs: options.timeoutMs, metrics, onFailure, ...(options.fetch === undefined ? {} : { fetch: options.fetch }) });
      const connection = new Connection(url, {
        commitment: 'confirmed',
        fetch: rpcFetch,
        disableRetryOnRateLimit: true,
        // Keep web3.js from building an agentkeepalive agent that globalThis.fetch would ignore.
        httpAgent: false,
      });
      return { index, label, url, rpcFetch, connection, breaker: urls.length > 1 ? this.breakerFor(index) : noop };
    });
    this.publish();
  }

  // A lone endpoint has no breaker: there is nothing to fail over to, and failing fast would
  // only delay the first cycle after the node recovers.
  private breakerFor(index: number): IPolicy {
    const breaker = circuitBreaker(handleWhen(isRetryableReadFailure), {
      halfOpenAfter: BREAKER_HALF_OPEN_MS,
      breaker: new ConsecutiveBreaker(BREAKER_FAILURES),
    });
    breaker.onBreak(() => {
      this.openedAt[index] = this.now();
      this.publish();
    });
    breaker.onReset(() => {
      this.openedAt[index] = undefined;
      this.clusterDue(index);
      this.publish();
    });
    return breaker;
  }

  /** Endpoints in the order a read tries them. */
  readOrder(): Endpoint[] {
    return readOrder(this.current(), this.now(), this.settings).map((index) => this.endpoints[index]!);
  }

  /** Endpoints a signed transaction goes to. */
  sendTargets(): Endpoint[] {
    return sendTargets(this.current(), this.now(), this.settings).map((index) => this.endpoints[index]!);
  }

  /**
   * Runs one request on `endpoint` through its circuit breaker, after the wait the endpoint
   * asked for (Retry-After) when that fits before `deadline` (the call's budget: ms, same clock
   * as `now`). An endpoint taken out answers with a retryable failure naming its origin,
   * without a request.
   */
  async run<T>(endpoint: Endpoint, method: string, deadline: number, signal: AbortSignal, request: () => Promise<T>): Promise<T> {
    signal.throwIfAborted();
    await this.waitForTurn(endpoint, method, deadline, signal);
    const classified = async () => {
      try {
        const result = await withCallSignal(signal, request);
        this.answered(endpoint);
        return result;
      } catch (err) {
        // An abort by the caller is no fault of the endpoint: not classified, not counted by the breaker.
        if (signal.aborted) throw signal.reason;
        const failure = classifyRpcError(this.options.chain, method, err);
        this.failed(endpoint, failure);
        throw failure;
      }
    };
    try {
      return await endpoint.breaker.execute(classified);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      const failure = err instanceof BrokenCircuitError ? this.takenOut(endpoint, method) : err;
      if (!isBridgeError(failure, 'CHAIN__RPC_FAILED')) throw failure;
      if (failure.context.rpcCode !== undefined) {
        this.options.metrics.rpcEndpointErrors.inc({ chain: this.options.chain, endpoint: endpoint.label, kind: 'rpc' });
      }
      // Which endpoint failed, for messages that name it (origin only: the label).
      throw new BridgeError('CHAIN__RPC_FAILED', { ...failure.context, endpoint: endpoint.label }, failure.words, { cause: failure.cause });
    }
  }

  /**
   * Honours the endpoint's Retry-After within the call's budget: waits for it when the wait and
   * one request (BRIDGE_RPC_TIMEOUT_MS) still end by `deadline`; otherwise fails at once with
   * the wait left, so the call goes to another endpoint or the caller comes back later.
   */
  private async waitForTurn(endpoint: Endpoint, method: string, deadline: number, signal: AbortSignal): Promise<void> {
    const notBefore = this.knowledge[endpoint.index]!.notBefore;
    const waitMs = notBefore === undefined ? 0 : notBefore - this.now();
    if (waitMs <= 0) return;
    if (this.now() + waitMs + this.options.timeoutMs > deadline) {
      const reason = `endpoint ${endpoint.label} asked for no calls for another ${Math.ceil(waitMs / 1000)} s (Retry-After), beyond this call's budget`;
      throw rpcFailure(this.options.chain, method, { kind: 'http', status: 429, retryAfterMs: waitMs, reason });
    }
    await sleep(waitMs, signal);
  }

  /** An answer to a call: the endpoint is alive, and serves again if it refused us. */
  private answered(endpoint: Endpoint): void {
    if (this.refusals[endpoint.index] !== undefined) {
      this.refusals[endpoint.index] = undefined;
      this.options.logger?.info({ chain: this.options.chain, endpoint: endpoint.label }, `RPC endpoint ${endpoint.label} of the ${chainName(this.options.chain)} chain serves again`);
    }
    this.heard(endpoint);
  }

  /**
   * Any answer, a slot probe's included: the endpoint is not silent. A probe does not end a
   * refusal: some providers refuse only some methods, and a read decides.
   */
  private heard(endpoint: Endpoint): void {
    const known = this.knowledge[endpoint.index]!;
    // Back from an outage: the node behind the URL may not be the one that answered before.
    if (known.silent) this.clusterDue(endpoint.index);
    known.silent = false;
    this.publish();
  }

  /** Records what a failure says about the endpoint: silent, refusing us, or asking us to wait. */
  private failed(endpoint: Endpoint, failure: BridgeError): void {
    if (!isBridgeError(failure, 'CHAIN__RPC_FAILED')) return;
    const known = this.knowledge[endpoint.index]!;
    const { kind, status, retryAfterMs, retryAfterRefused } = failure.context;
    if (retryAfterRefused !== undefined) this.retryAfterRefused(endpoint, retryAfterRefused);
    if (retryAfterMs !== undefined && retryAfterMs > 0) this.waitFor(endpoint, retryAfterMs);
    known.silent = UNANSWERED_KINDS.has(kind) || (kind === 'http' && status !== undefined && status >= 500);
    if (isEndpointRefusal(failure.context)) this.refused(endpoint, status!);
    this.publish();
  }

  /** The endpoint asked for no calls for `ms` (at most RETRY_AFTER_MAX_MS): out of service, and republished when the wait ends. */
  private waitFor(endpoint: Endpoint, ms: number): void {
    const known = this.knowledge[endpoint.index]!;
    known.notBefore = Math.max(known.notBefore ?? 0, this.now() + ms);
    clearTimeout(this.waitEnds[endpoint.index]);
    this.waitEnds[endpoint.index] = setTimeout(() => this.publish(), known.notBefore - this.now()).unref();
  }

  private retryAfterRefused(endpoint: Endpoint, header: string): void {
    if (this.retryAfterLogged.has(endpoint.index)) return;
    this.retryAfterLogged.add(endpoint.index);
    this.options.logger?.warn(
      { chain: this.options.chain, endpoint: endpoint.label, retryAfter: header, ceilingMs: RETRY_AFTER_MAX_MS },
      `RPC endpoint ${endpoint.label} of the ${chainName(this.options.chain)} chain sent a Retry-After the server does not honour as sent (${header}): ` +
        `it waits at most ${RETRY_AFTER_MAX_MS / 1000} s and ignores one it cannot read; logged once per endpoint`,
    );
  }

  private refused(endpoint: Endpoint, status: number): void {
    const previous = this.refusals[endpoint.index];
    this.refusals[endpoint.index] = { status, at: this.now() };
    if (previous?.status === status) return;
    this.options.logger?.warn(
      { chain: this.options.chain, endpoint: endpoint.label, status },
      `RPC endpoint ${endpoint.label} of the ${chainName(this.options.chain)} chain answers HTTP ${status}: taken out until ${REFUSAL_HOLD_MS / 1000} s after its latest refusal, calls go to the next endpoint; check its key or allow-list`,
    );
  }

  private takenOut(endpoint: Endpoint, method: string): BridgeError<'CHAIN__RPC_FAILED'> {
    const reason = `endpoint ${endpoint.label} is taken out after ${BREAKER_FAILURES} consecutive failures; probed again within ${BREAKER_HALF_OPEN_MS / 1000} s`;
    return rpcFailure(this.options.chain, method, { kind: 'unavailable', reason });
  }

  /**
   * Starts one getSlot per endpoint when the last probe is older than SLOT_PROBE_INTERVAL_MS.
   * Not awaited: a stalled endpoint's probe ends at BRIDGE_RPC_TIMEOUT_MS without holding reads.
   * Single-endpoint pools never probe: there is nothing to choose.
   */
  probeSlots(): void {
    const now = this.now();
    if (this.endpoints.length < 2 || !probeDue(this.lastProbeAt, now, SLOT_PROBE_INTERVAL_MS)) return;
    this.lastProbeAt = now;
    // An endpoint that asked for no calls (Retry-After) is not probed either.
    const probed = this.endpoints.filter(({ index }) => !isWaiting(this.knowledge[index]!, now));
    this.askClusters(probed.filter(({ index }) => this.clusters[index]!.ask === 'due'));
    for (const endpoint of probed) {
      endpoint.connection
        .getSlot({ commitment: 'confirmed' })
        .then((slot) => {
          this.heard(endpoint);
          this.observeSlot(endpoint.index, slot);
        })
        .catch((err: unknown) => this.failed(endpoint, classifyRpcError(this.options.chain, 'getSlot', err)));
    }
  }

  /**
   * One getGenesisHash per endpoint whose cluster is due (each bounded by BRIDGE_RPC_TIMEOUT_MS,
   * as every request): at the first probe, and again once it is back from an outage. One that
   * fails stays due and is asked at a later probe (at most one per SLOT_PROBE_INTERVAL_MS).
   */
  private askClusters(endpoints: readonly Endpoint[]): void {
    for (const endpoint of endpoints) {
      const cluster = this.clusters[endpoint.index]!;
      cluster.ask = 'asking';
      endpoint.connection
        .getGenesisHash()
        .then((hash) => {
          if (!GENESIS_HASH.test(hash)) throw new Error('not a genesis hash');
          cluster.ask = 'known';
          cluster.genesis = hash;
          this.decideClusters();
          if (this.knowledge[endpoint.index]!.foreign) this.options.metrics.rpcEndpointClusterMismatches.inc({ chain: this.options.chain, endpoint: endpoint.label });
        })
        .catch(() => {
          cluster.ask = 'due';
        });
    }
  }

  private clusterDue(index: number): void {
    const cluster = this.clusters[index]!;
    if (cluster.ask === 'known') cluster.ask = 'due';
  }

  /** Compares the genesis hashes known (./endpoint-choice.ts `foreignEndpoints`): a node of another cluster serves nothing. */
  private decideClusters(): void {
    const { chain, logger } = this.options;
    const foreign = foreignEndpoints(this.clusters.map(({ genesis }) => genesis));
    for (const known of this.knowledge) {
      const endpoint = this.endpoints[known.index]!;
      if (foreign[known.index] === known.foreign) continue;
      known.foreign = foreign[known.index]!;
      if (known.foreign) logger?.error({ chain, endpoint: endpoint.label }, this.foreignProblem(known.index));
      else logger?.info({ chain, endpoint: endpoint.label }, `RPC endpoint ${endpoint.label} of the ${chainName(chain)} chain answers the chain's genesis hash again: it serves again`);
    }
    this.publish();
  }

  /**
   * What is wrong with a node of another cluster, naming the variable that lists it and its origin
   * (never its URL). Only a fallback can be one: the primary's answer, when there is one, is the chain's.
   */
  private foreignProblem(index: number): string {
    const { chain } = this.options;
    const { fallbackUrls: variable, rpcUrl } = chainVariables(chain);
    const genesis = this.clusters.map((cluster) => cluster.genesis);
    const whose = genesis[0] === undefined ? "the one most of the chain's endpoints answer" : `${rpcUrl}'s`;
    return (
      `RPC endpoint ${this.endpoints[index]!.label} in ${variable} is a node of another cluster: its genesis hash ${genesis[index]} is not ${whose} ` +
      `(${chainGenesis(genesis)}); it serves no reads or sends of the ${chainName(chain)} chain. ` +
      `A configuration error, not transient: remove it from ${variable} or point it at a node of that chain`
    );
  }

  /** What an operator must fix in this chain's endpoints right now: the nodes of another cluster, for /health. */
  configurationProblems(): string[] {
    return this.knowledge.filter((known) => known.foreign).map((known) => this.foreignProblem(known.index));
  }

  /**
   * The context slot of `endpoint`'s answer to a read that carried `floor`: an answer beyond what
   * the chain can have made, or older than the floor, is counted and refused (a retryable
   * failure: the read moves on to the next endpoint); otherwise the slot is the endpoint's mark.
   */
  admitContextSlot(endpoint: Endpoint, method: string, slot: number, floor: number | undefined): void {
    if (!this.observeSlot(endpoint.index, slot)) {
      const reason = `endpoint ${endpoint.label} answered at slot ${slot}, beyond what the chain can have made since the slot its endpoints agree on: ignored`;
      throw rpcFailure(this.options.chain, method, { kind: 'unavailable', reason });
    }
    if (floor !== undefined && slot < floor) {
      this.slots.countOutlier(endpoint.index, 'behind');
      const reason = `endpoint ${endpoint.label} answered at slot ${slot}, older than the slot floor ${floor} the read carried: ignored`;
      throw rpcFailure(this.options.chain, method, { kind: 'rpc', rpcCode: MIN_CONTEXT_SLOT_NOT_REACHED, reason });
    }
  }

  /** The slot every read carries as minContextSlot (./slot-view.ts); undefined before two answers agreed on one. */
  slotFloor(): number | undefined {
    return this.slots.floor();
  }

  /** A decision rests on the view at `slot` (a landing of the server's own): later reads carry it as their floor. */
  restOn(slot: number): void {
    this.slots.restOn(slot);
    this.publish();
  }

  /** Whether a read that carried the floor got an answer (true) or was refused it by every endpoint tried (false). */
  floorAnswered(answered: boolean): void {
    if (answered) this.slots.floorHonoured();
    else this.slots.floorRefused();
  }

  /** Records a slot an endpoint reported: its mark when believable (true), an outlier otherwise (false). */
  observeSlot(index: number, slot: number): boolean {
    if (!this.slots.claim(index, slot)) {
      this.publish();
      return false;
    }
    const known = this.knowledge[index]!;
    if (known.slot === undefined || slot > known.slot) known.advancedAt = this.now();
    known.slot = slot;
    this.options.metrics.rpcEndpointSlot.set({ chain: this.options.chain, endpoint: this.endpoints[index]!.label }, slot);
    this.publish();
    return true;
  }

  /** The pool's clock (ms): call budgets are deadlines on it. */
  time(): number {
    return this.now();
  }

  /** Labels, for the startup line. */
  labels(): string[] {
    return this.endpoints.map((endpoint) => endpoint.label);
  }

  /**
   * The endpoints a history read (getSignaturesForAddress, getTransaction, a status search)
   * tries, in read order: those not known to lack history. A lack is asked again after
   * HISTORY_RECHECK_MS (a node may be restarted with history).
   */
  historyOrder(): Endpoint[] {
    const now = this.now();
    return this.readOrder().filter(({ index }) => {
      const since = this.history[index]!.lackingSince;
      return since === undefined || now - since >= HISTORY_RECHECK_MS;
    });
  }

  /** The endpoint answered a history read with -32011 (`false`), or with history (`true`). */
  observeHistory(endpoint: Endpoint, has: boolean): void {
    this.history[endpoint.index]!.lackingSince = has ? undefined : this.now();
    const available = this.history.some((known) => known.lackingSince === undefined);
    if (available === this.historyAvailable) return;
    const first = this.historyAvailable === undefined;
    this.historyAvailable = available;
    const { chain, metrics, logger } = this.options;
    metrics.rpcHistoryAvailable.set({ chain }, available ? 1 : 0);
    if (!available) {
      logger?.warn(
        { chain, check: 'second_signer' },
        `no RPC endpoint of the ${chainName(chain)} chain keeps transaction history (JSON-RPC -32011): second-signer detection is off there, and dropped transactions are resolved from the status cache; add an endpoint with history to ${chainVariables(chain).fallbackUrls} to turn it on`,
      );
    } else if (!first) {
      logger?.info({ chain, check: 'second_signer' }, `an RPC endpoint of the ${chainName(chain)} chain keeps transaction history again: second-signer detection is on`);
    }
  }

  /** Whether some endpoint keeps transaction history: undefined until a history read said. */
  hasHistory(): boolean | undefined {
    return this.historyAvailable;
  }

  private current(): EndpointKnowledge[] {
    const now = this.now();
    for (const known of this.knowledge) {
      const opened = this.openedAt[known.index];
      const refusal = this.refusals[known.index];
      // Past the half-open delay (or the refusal hold) the endpoint ranks again, so the next read probes it.
      known.open = (opened !== undefined && now - opened < BREAKER_HALF_OPEN_MS) || (refusal !== undefined && now - refusal.at < REFUSAL_HOLD_MS);
      if (known.notBefore !== undefined && !isWaiting(known, now)) known.notBefore = undefined;
      const ahead = this.slots.isAhead(known.index);
      // A first claim nobody could judge, found beyond the ceiling once another endpoint answered: an outlier too.
      if (ahead && !known.ahead) this.slots.countOutlier(known.index, 'ahead');
      known.ahead = ahead;
      // A re-base dropped every mark: the endpoint's slot is unknown until its next answer.
      if (this.slots.latest(known.index) === undefined) known.slot = undefined;
    }
    return this.knowledge;
  }

  private publish(): void {
    const all = this.current();
    const now = this.now();
    for (const known of all) {
      // An endpoint waiting out a Retry-After, or of another cluster, serves nothing: not up.
      const fit = !known.open && !known.foreign && !isWaiting(known, now) && demotionOf(known, all, now, this.settings) === undefined;
      this.options.metrics.rpcEndpointUp.set({ chain: this.options.chain, endpoint: this.endpoints[known.index]!.label }, fit ? 1 : 0);
    }
  }
}
