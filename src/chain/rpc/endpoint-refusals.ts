import type { BridgeErrorContexts } from '../../errors.js';
import { isEndpointRefusal } from '../../failure-policy.js';
import type { Logger } from '../../log/logger.js';
import { chainName, type ChainSide } from '../../domain.js';
import type { EndpointKnowledge } from './endpoint-choice.js';
import type { Endpoint } from './endpoint.js';
import { RETRY_AFTER_MAX_MS } from './rpc-failure.js';

/**
 * What a chain's endpoints said about serving us (./endpoint-pool.ts asks): a refusal (HTTP 401,
 * 403 or 404) takes an endpoint out until REFUSAL_HOLD_MS after the latest one, a Retry-After
 * keeps calls away until it ends. Each change is logged once: a refusal when it starts or its
 * status changes, its end when the endpoint answers a call, a Retry-After the server does not
 * honour as sent once per endpoint and process.
 */

/**
 * How long after its latest refusal (HTTP 401, 403 or 404, to a call or a slot probe) an
 * endpoint stays out before a call tries it again; that call's answer ends the refusal.
 */
export const REFUSAL_HOLD_MS = 60_000;

export interface EndpointRefusalsOptions {
  chain: ChainSide;
  /** The pool's knowledge of each endpoint: a Retry-After sets its `notBefore`. */
  knowledge: EndpointKnowledge[];
  /** Republishes bridge_rpc_endpoint_up: called when a Retry-After wait ends. */
  publish: () => void;
  now: () => number;
  logger?: Logger;
}

export class EndpointRefusals {
  /** The HTTP status and time of an endpoint's latest refusal, until it serves again. */
  private readonly refusals: ({ status: number; at: number } | undefined)[];
  /** Endpoints whose refused Retry-After was logged: once per endpoint and process. */
  private readonly retryAfterLogged = new Set<number>();
  /** Republishes bridge_rpc_endpoint_up when an endpoint's Retry-After wait ends (at most RETRY_AFTER_MAX_MS away). */
  private readonly waitEnds: (NodeJS.Timeout | undefined)[];

  constructor(private readonly options: EndpointRefusalsOptions) {
    this.refusals = options.knowledge.map(() => undefined);
    this.waitEnds = options.knowledge.map(() => undefined);
  }

  /** Whether the endpoint at `index` is still held out by its latest refusal at `now`. */
  holds(index: number, now: number): boolean {
    const refusal = this.refusals[index];
    return refusal !== undefined && now - refusal.at < REFUSAL_HOLD_MS;
  }

  /** An answer to a call: the endpoint serves again if it refused us. */
  answered(endpoint: Endpoint): void {
    if (this.refusals[endpoint.index] === undefined) return;
    this.refusals[endpoint.index] = undefined;
    this.options.logger?.info(
      { chain: this.options.chain, endpoint: endpoint.label },
      `RPC endpoint ${endpoint.label} of the ${chainName(this.options.chain)} chain serves again`,
    );
  }

  /** What a failure of `endpoint` asked of us: a wait (Retry-After), or to stay away (a refusal). */
  failed(endpoint: Endpoint, facts: BridgeErrorContexts['CHAIN__RPC_FAILED']): void {
    const { status, retryAfterMs, retryAfterRefused } = facts;
    if (retryAfterRefused !== undefined) this.retryAfterRefused(endpoint, retryAfterRefused);
    if (retryAfterMs !== undefined && retryAfterMs > 0) this.waitFor(endpoint, retryAfterMs);
    if (isEndpointRefusal(facts)) this.refused(endpoint, status!);
  }

  /** The endpoint asked for no calls for `ms` (at most RETRY_AFTER_MAX_MS): out of service, and republished when the wait ends. */
  private waitFor(endpoint: Endpoint, ms: number): void {
    const known = this.options.knowledge[endpoint.index]!;
    known.notBefore = Math.max(known.notBefore ?? 0, this.options.now() + ms);
    clearTimeout(this.waitEnds[endpoint.index]);
    this.waitEnds[endpoint.index] = setTimeout(() => this.options.publish(), known.notBefore - this.options.now()).unref();
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
    this.refusals[endpoint.index] = { status, at: this.options.now() };
    if (previous?.status === status) return;
    this.options.logger?.warn(
      { chain: this.options.chain, endpoint: endpoint.label, status },
      `RPC endpoint ${endpoint.label} of the ${chainName(this.options.chain)} chain answers HTTP ${status}: taken out until ${REFUSAL_HOLD_MS / 1000} s after its latest refusal, calls go to the next endpoint; check its key or allow-list`,
    );
  }
}
