import { Connection } from '@solana/web3.js';
import { BrokenCircuitError, circuitBreaker, ConsecutiveBreaker, handleWhen, noop, type IPolicy } from 'cockatiel';
import { BridgeError, isBridgeError, type RpcFailureKind } from '../../errors.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { ChainSide } from '../../domain.js';
import { endpointLabels, probeDue, readOrder, sendTargets, demotionOf, type ChoiceSettings, type EndpointKnowledge } from './endpoint-choice.js';
import { isRetryableReadFailure } from './read-retry.js';
import { classifyRpcError, rpcFailure } from './rpc-failure.js';
import { createRpcFetch, withCallSignal, type RpcFetch } from './rpc-fetch.js';

/**
 * The endpoints of one chain (primary first), their circuit breakers and slot knowledge, and
 * the per-endpoint metrics. Which endpoint serves is decided by ./endpoint-choice.ts.
 */

/** Consecutive transient failures that take an endpoint out. */
export const BREAKER_FAILURES = 3;
/** How long an endpoint stays out before one request probes it again (half-open). */
export const BREAKER_HALF_OPEN_MS = 10_000;
/** Slot probes (one getSlot per endpoint) at most this often, and only while reads happen. */
const SLOT_PROBE_INTERVAL_MS = 2_000;
/** A slot that has not advanced for this long, while another endpoint's has, is frozen. */
const SLOT_FROZEN_AFTER_MS = 10_000;

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
  fetch?: RpcFetch;
  now?: () => number;
}

export class EndpointPool {
  readonly endpoints: readonly Endpoint[];
  private readonly knowledge: EndpointKnowledge[];
  private readonly openedAt: (number | undefined)[];
  private readonly settings: ChoiceSettings;
  private lastProbeAt: number | undefined;
  private readonly now: () => number;

  constructor(private readonly options: EndpointPoolOptions) {
    const { chain, urls, metrics } = options;
    this.now = options.now ?? Date.now;
    this.settings = { maxSlotLag: options.maxSlotLag, frozenAfterMs: SLOT_FROZEN_AFTER_MS };
    const labels = endpointLabels(urls);
    this.openedAt = urls.map(() => undefined);
    this.knowledge = urls.map((_, index) => ({ index, open: false, slot: undefined, advancedAt: undefined }));
    this.endpoints = urls.map((url, index) => {
      const label = labels[index]!;
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
   * Runs one request on `endpoint` through its circuit breaker. An endpoint taken out answers
   * with a retryable failure naming its origin, without a request.
   */
  async run<T>(endpoint: Endpoint, method: string, signal: AbortSignal, request: () => Promise<T>): Promise<T> {
    signal.throwIfAborted();
    const classified = async () => {
      try {
        return await withCallSignal(signal, request);
      } catch (err) {
        // An abort by the caller is no fault of the endpoint: not classified, not counted by the breaker.
        if (signal.aborted) throw signal.reason;
        throw classifyRpcError(this.options.chain, method, err);
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
      throw new BridgeError('CHAIN__RPC_FAILED', { ...failure.context, endpoint: endpoint.label }, failure.message, { cause: failure.cause });
    }
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
    for (const endpoint of this.endpoints) {
      endpoint.connection
        .getSlot({ commitment: 'confirmed' })
        .then((slot) => this.observeSlot(endpoint.index, slot))
        .catch(() => this.publish());
    }
  }

  /** Records a slot an endpoint reported. */
  observeSlot(index: number, slot: number): void {
    const known = this.knowledge[index]!;
    if (known.slot === undefined || slot > known.slot) {
      known.slot = slot;
      known.advancedAt = this.now();
    }
    this.options.metrics.rpcEndpointSlot.set({ chain: this.options.chain, endpoint: this.endpoints[index]!.label }, slot);
    this.publish();
  }

  /** Labels, for the startup line. */
  labels(): string[] {
    return this.endpoints.map((endpoint) => endpoint.label);
  }

  private current(): EndpointKnowledge[] {
    const now = this.now();
    for (const known of this.knowledge) {
      const opened = this.openedAt[known.index];
      // Past the half-open delay the endpoint ranks again, so the next read probes it.
      known.open = opened !== undefined && now - opened < BREAKER_HALF_OPEN_MS;
    }
    return this.knowledge;
  }

  private publish(): void {
    const all = this.current();
    const now = this.now();
    for (const known of all) {
      const fit = !known.open && demotionOf(known, all, now, this.settings) === undefined;
      this.options.metrics.rpcEndpointUp.set({ chain: this.options.chain, endpoint: this.endpoints[known.index]!.label }, fit ? 1 : 0);
    }
  }
}
