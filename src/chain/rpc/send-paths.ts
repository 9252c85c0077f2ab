import type { ChainSide } from '../../domain.js';
import type { Logger } from '../../log/logger.js';
import type { Metrics } from '../../metrics/metrics.js';
import { endpointLabels } from './endpoint-choice.js';
import { jsonRpcCall } from './rpc-failure.js';
import { createRpcFetch, type RpcFetch } from './rpc-fetch.js';

/**
 * Send-only paths (BRIDGE_SOURCE_SEND_URLS, BRIDGE_TARGET_SEND_URLS; docs/chain-client.md,
 * "Send-only paths"): endpoints that receive every signed transaction besides the read
 * endpoints (a staked RPC connection, a sender service) and are never read from. Each send is
 * one sendTransaction (skipPreflight, maxRetries 0: the read endpoints' preflight already
 * judged the bytes) through the same metered fetch as every RPC call, so bounded by
 * BRIDGE_RPC_TIMEOUT_MS and MAX_RESPONSE_BYTES. Sends do not hold up the sender's watch: they
 * run beside it, at most MAX_IN_FLIGHT_PER_PATH at once per path (a send beyond is skipped and
 * counted failed), and report each acceptance to `onAccepted`.
 */

/** The path label of the read endpoints' sends in the per-path metrics. */
export const READ_ENDPOINTS_PATH = 'rpc';

/** Sends one path may have open at once: a path that stalls costs at most this many requests per timeout. */
const MAX_IN_FLIGHT_PER_PATH = 4;

export interface SendPathsOptions {
  chain: ChainSide;
  urls: readonly string[];
  timeoutMs: number;
  metrics: Metrics;
  logger: Logger;
  fetch?: RpcFetch;
}

interface Path {
  label: string;
  url: string;
  rpcFetch: RpcFetch;
  inFlight: number;
}

export class SendPaths {
  readonly #paths: Path[];
  readonly #options: SendPathsOptions;

  constructor(options: SendPathsOptions) {
    this.#options = options;
    const labels = endpointLabels(options.urls);
    this.#paths = options.urls.map((url, i) => ({
      label: labels[i]!,
      url,
      inFlight: 0,
      rpcFetch: createRpcFetch({ chain: options.chain, timeoutMs: options.timeoutMs, metrics: options.metrics, ...(options.fetch === undefined ? {} : { fetch: options.fetch }) }),
    }));
    for (const label of [READ_ENDPOINTS_PATH, ...labels]) zeroPathCounters(options.metrics, options.chain, label);
  }

  get labels(): string[] {
    return this.#paths.map((path) => path.label);
  }

  /** Sends `wire` through every path, beside the caller; `onAccepted(label)` for each path that accepts it. */
  send(wire: Uint8Array, signal: AbortSignal, onAccepted: (label: string) => void): void {
    if (this.#paths.length === 0) return;
    const params = [Buffer.from(wire).toString('base64'), { encoding: 'base64', skipPreflight: true, maxRetries: 0 }];
    for (const path of this.#paths) void this.#sendOn(path, params, signal, onAccepted);
  }

  async #sendOn(path: Path, params: unknown[], signal: AbortSignal, onAccepted: (label: string) => void): Promise<void> {
    const { chain, metrics, logger } = this.#options;
    if (path.inFlight >= MAX_IN_FLIGHT_PER_PATH) {
      metrics.sendPathSends.inc({ chain, path: path.label, outcome: 'failed' });
      logger.debug({ path: path.label }, 'send-only path busy: this send is skipped');
      return;
    }
    path.inFlight++;
    try {
      const result = await jsonRpcCall(path.rpcFetch, path.url, 'sendTransaction', params, signal);
      if (typeof result !== 'string') throw new Error(`the result is not a signature string: ${JSON.stringify(result)?.slice(0, 100)}`);
      metrics.sendPathSends.inc({ chain, path: path.label, outcome: 'accepted' });
      onAccepted(path.label);
    } catch (err) {
      if (signal.aborted) return;
      metrics.sendPathSends.inc({ chain, path: path.label, outcome: 'failed' });
      logger.debug({ err, path: path.label }, 'send-only path refused or failed a send');
    } finally {
      path.inFlight--;
    }
  }
}

function zeroPathCounters(metrics: Metrics, chain: ChainSide, path: string): void {
  for (const outcome of ['accepted', 'failed']) metrics.sendPathSends.inc({ chain, path, outcome }, 0);
  metrics.sendPathLanded.inc({ chain, path }, 0);
}

/**
 * Which paths accepted each version of one transaction. Which copy the leader took is not
 * visible to the server, so a landing is credited to every path that accepted the landed
 * version; a path's landings over its accepted sends is what it is worth (an unstaked node
 * under load needs many sends per landing).
 */
export class PathAcceptances {
  readonly #paths = new Map<string, Set<string>>();

  accepted(signature: string, label: string): void {
    const paths = this.#paths.get(signature) ?? new Set<string>();
    paths.add(label);
    this.#paths.set(signature, paths);
  }

  pathsOf(signature: string): string[] {
    return [...(this.#paths.get(signature) ?? [])];
  }
}
