import { BrokenCircuitError, circuitBreaker, ConsecutiveBreaker, handleWhen, noop, type IPolicy } from 'cockatiel';
import { BridgeError, isBridgeError, type RpcFailureKind } from '../../errors.js';
import { isBehindSlotFloor, MIN_CONTEXT_SLOT_NOT_REACHED } from '../../failure-policy.js';
import type { Logger } from '../../log/logger.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { ChainSide } from '../../domain.js';
import { sleep } from '../../time.js';
import {
  endpointLabels,
  isWaiting,
  probeDue,
  readOrder,
  sendTargets,
  demotionOf,
  type ChoiceSettings,
  type EndpointKnowledge,
} from './endpoint-choice.js';
import { EndpointClusters } from './endpoint-clusters.js';
import { EndpointHistory } from './endpoint-history.js';
import { EndpointRefusals } from './endpoint-refusals.js';
import { isRetryableReadFailure } from './read-retry.js';
import { classifyRpcError, rpcFailure } from './rpc-failure.js';
import { withCallSignal, type RpcFetch } from './rpc-fetch.js';
import { openEndpoint, type Endpoint } from './endpoint.js';
import { SlotView, type Bank } from './slot-view.js';

/**
 * The endpoints of one chain (primary first; each one ./endpoint.ts), their circuit breakers,
 * slot knowledge (./slot-view.ts), refusals and Retry-After waits (./endpoint-refusals.ts),
 * cluster identity (./endpoint-clusters.ts) and history capability (./endpoint-history.ts), and the
 * per-endpoint metrics. Which endpoint serves is decided by ./endpoint-choice.ts.
 */

/** Consecutive transient failures that take an endpoint out. */
export const BREAKER_FAILURES = 3;
/** How long an endpoint stays out before one request probes it again (half-open). */
export const BREAKER_HALF_OPEN_MS = 10_000;
/** Slot probes (one getSlot per endpoint) at most this often, and only while reads happen. */
const SLOT_PROBE_INTERVAL_MS = 2_000;
/** A slot that has not advanced for this long, while another endpoint's has, is frozen. */
const SLOT_FROZEN_AFTER_MS = 10_000;
// Failures that mean the endpoint did not answer (with HTTP 5xx below); a JSON-RPC error, a 429
// or another 4xx is an answer.
const UNANSWERED_KINDS: ReadonlySet<RpcFailureKind> = new Set(['timeout', 'network', 'tls', 'malformed', 'too_large']);

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

export class EndpointPool {
  readonly endpoints: readonly Endpoint[];
  private readonly knowledge: EndpointKnowledge[];
  private readonly openedAt: (number | undefined)[];
  private readonly refusals: EndpointRefusals;
  private readonly history: EndpointHistory;
  private readonly clusters: EndpointClusters;
  /** Each endpoint's slot claims, judged, and the floor reads carry (./slot-view.ts). */
  private readonly slots: SlotView;
  private readonly settings: ChoiceSettings;
  private lastProbeAt: number | undefined;
  private readonly now: () => number;

  constructor(private readonly options: EndpointPoolOptions) {
    const { chain, urls, metrics } = options;
    this.now = options.now ?? Date.now;
    this.settings = { maxSlotLag: options.maxSlotLag, frozenAfterMs: SLOT_FROZEN_AFTER_MS };
    const labels = endpointLabels(urls);
    this.openedAt = urls.map(() => undefined);
    const logger = options.logger === undefined ? {} : { logger: options.logger };
    this.history = new EndpointHistory({ chain, metrics, endpoints: urls.length, now: this.now, ...logger });
    this.knowledge = urls.map((_, index) => ({
      index,
      open: false,
      silent: false,
      foreign: false,
      notBefore: undefined,
      slot: undefined,
      ahead: false,
      advancedAt: undefined,
    }));
    this.refusals = new EndpointRefusals({ chain, knowledge: this.knowledge, publish: () => this.publish(), now: this.now, ...logger });
    this.slots = new SlotView({ chain, labels, maxSlotLag: options.maxSlotLag, metrics, now: this.now, ...logger });
    this.endpoints = urls.map((url, index) => {
      const settings = {
        chain,
        label: labels[index]!,
        timeoutMs: options.timeoutMs,
        metrics,
        ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      };
      return openEndpoint(index, url, settings, urls.length > 1 ? this.breakerFor(index) : noop);
    });
    this.clusters = new EndpointClusters({
      chain,
      metrics,
      endpoints: this.endpoints,
      knowledge: this.knowledge,
      publish: () => this.publish(),
      ...logger,
    });
    this.publish();
  }

  // A lone endpoint has no breaker: there is nothing to fail over to, and failing fast would
  // only delay the first cycle after the node recovers.
  private breakerFor(index: number): IPolicy {
    // A node behind the floor a read carried is not failing: its slot marks demote it, and a
    // floor nobody reaches (one lying answer) is dropped by the slot view. Counted here, eight
    // tries at an unreachable floor would take out every endpoint for BREAKER_HALF_OPEN_MS.
    const breaker = circuitBreaker(
      handleWhen((err) => isRetryableReadFailure(err) && !isBehindSlotFloor(err)),
      {
        halfOpenAfter: BREAKER_HALF_OPEN_MS,
        breaker: new ConsecutiveBreaker(BREAKER_FAILURES),
      },
    );
    breaker.onBreak(() => {
      this.openedAt[index] = this.now();
      this.publish();
    });
    breaker.onReset(() => {
      this.openedAt[index] = undefined;
      this.clusters.due(index);
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
    this.refusals.answered(endpoint);
    this.heard(endpoint);
  }

  /**
   * Any answer, a slot probe's included: the endpoint is not silent. A probe does not end a
   * refusal: some providers refuse only some methods, and a read decides.
   */
  private heard(endpoint: Endpoint): void {
    const known = this.knowledge[endpoint.index]!;
    // Back from an outage: the node behind the URL may not be the one that answered before.
    if (known.silent) this.clusters.due(endpoint.index);
    known.silent = false;
    this.publish();
  }

  /** Records what a failure says about the endpoint: silent, refusing us, or asking us to wait. */
  private failed(endpoint: Endpoint, failure: BridgeError): void {
    if (!isBridgeError(failure, 'CHAIN__RPC_FAILED')) return;
    const known = this.knowledge[endpoint.index]!;
    const { kind, status } = failure.context;
    this.refusals.failed(endpoint, failure.context);
    known.silent = UNANSWERED_KINDS.has(kind) || (kind === 'http' && status !== undefined && status >= 500);
    this.publish();
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
    this.clusters.askDue(probed);
    for (const endpoint of probed) {
      endpoint.connection
        .getSlot({ commitment: 'confirmed' })
        .then((slot) => {
          this.heard(endpoint);
          this.observeSlot(endpoint.index, slot, 'confirmed');
        })
        .catch((err: unknown) => this.failed(endpoint, classifyRpcError(this.options.chain, 'getSlot', err)));
    }
  }

  /** What an operator must fix in this chain's endpoints right now: the nodes of another cluster, for /health. */
  configurationProblems(): string[] {
    return this.clusters.problems();
  }

  /**
   * The context slot of `endpoint`'s answer from `bank` to a read that carried `floor`: an answer
   * beyond what the chain can have made, or older than the floor, is counted and refused (a
   * retryable failure: the read moves on to the next endpoint); otherwise the slot is a claim of
   * that bank (./slot-view.ts: a processed one is never a mark).
   */
  admitContextSlot(endpoint: Endpoint, method: string, slot: number, floor: number | undefined, bank: Bank): void {
    if (!this.observeSlot(endpoint.index, slot, bank)) {
      const reason = `endpoint ${endpoint.label} answered at slot ${slot}, beyond what the chain can have made since the slot its endpoints agree on: ignored`;
      throw rpcFailure(this.options.chain, method, { kind: 'unavailable', reason });
    }
    if (floor !== undefined && slot < floor) {
      this.slots.countOutlier(endpoint.index, 'behind');
      const reason = `endpoint ${endpoint.label} answered at slot ${slot}, older than the slot floor ${floor} the read carried: ignored`;
      throw rpcFailure(this.options.chain, method, { kind: 'rpc', rpcCode: MIN_CONTEXT_SLOT_NOT_REACHED, reason });
    }
  }

  /** The slot a read from `bank` carries as minContextSlot (./slot-view.ts); undefined before two answers agreed on one. */
  slotFloor(bank: Bank): number | undefined {
    return this.slots.floor(bank);
  }

  /** A decision rests on the view at `slot` of `bank` (a landing of the server's own): later reads from that bank carry it as their floor. */
  restOn(slot: number, bank: Exclude<Bank, 'processed'>): void {
    this.slots.restOn(slot, bank);
    this.publish();
  }

  /** Whether a read that carried `bank`'s floor got an answer (true) or was refused it by every endpoint tried (false). */
  floorAnswered(answered: boolean, bank: Bank): void {
    if (answered) this.slots.floorHonoured(bank);
    else this.slots.floorRefused(bank);
  }

  /**
   * Records a slot an endpoint reported from `bank`: believable (true) or an outlier (false). Only
   * a confirmed one is the endpoint's slot for choosing endpoints (a lag is judged bank to bank).
   */
  observeSlot(index: number, slot: number, bank: Bank): boolean {
    if (!this.slots.claim(index, slot, bank)) {
      this.publish();
      return false;
    }
    if (bank !== 'confirmed') return true;
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
    return this.readOrder().filter(({ index }) => this.history.mayHave(index));
  }

  /** The endpoint answered a history read with -32011 (`false`), or with history (`true`). */
  observeHistory(endpoint: Endpoint, has: boolean): void {
    this.history.observe(endpoint.index, has);
  }

  /** Whether some endpoint keeps transaction history: undefined until a history read said. */
  hasHistory(): boolean | undefined {
    return this.history.has();
  }

  private current(): EndpointKnowledge[] {
    const now = this.now();
    for (const known of this.knowledge) {
      const opened = this.openedAt[known.index];
      // Past the half-open delay (or the refusal hold) the endpoint ranks again, so the next read probes it.
      known.open = (opened !== undefined && now - opened < BREAKER_HALF_OPEN_MS) || this.refusals.holds(known.index, now);
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
