import bs58 from 'bs58';
import type { ChainSide } from '../../domain.js';
import { isBridgeError } from '../../errors.js';
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
 *
 * A path is taken at its configured URL only: a redirect is never followed (the signed bytes
 * would be POSTed to an origin nobody configured), it is a failed send and a warn line. And a
 * path's answer is checked, not believed: an acceptance is a result equal to the transaction's
 * own signature (its first, the authority's); any other answer is a failed send and a warn line.
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
      rpcFetch: createRpcFetch({
        chain: options.chain,
        timeoutMs: options.timeoutMs,
        metrics: options.metrics,
        ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      }),
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
    const signature = firstSignature(wire);
    for (const path of this.#paths) void this.#sendOn(path, params, signature, signal, onAccepted);
  }

  async #sendOn(path: Path, params: unknown[], signature: string, signal: AbortSignal, onAccepted: (label: string) => void): Promise<void> {
    const { chain, metrics, logger } = this.#options;
    if (path.inFlight >= MAX_IN_FLIGHT_PER_PATH) {
      metrics.sendPathSends.inc({ chain, path: path.label, outcome: 'failed' });
      logger.debug({ path: path.label }, 'send-only path busy: this send is skipped');
      return;
    }
    path.inFlight++;
    try {
      const result = await jsonRpcCall(path.rpcFetch, path.url, 'sendTransaction', params, signal);
      if (result !== signature) {
        metrics.sendPathSends.inc({ chain, path: path.label, outcome: 'failed' });
        const answered = typeof result === 'string' ? result.slice(0, 100) : JSON.stringify(result)?.slice(0, 100);
        logger.warn(
          { path: path.label, signature, answered },
          'send-only path answered another signature than the transaction it was sent: not counted as accepted; check BRIDGE_*_SEND_URLS',
        );
        return;
      }
      metrics.sendPathSends.inc({ chain, path: path.label, outcome: 'accepted' });
      onAccepted(path.label);
    } catch (err) {
      if (signal.aborted) return;
      metrics.sendPathSends.inc({ chain, path: path.label, outcome: 'failed' });
      if (isRedirect(err))
        logger.warn(
          { err, path: path.label },
          'send-only path answered a redirect, which is never followed: configure the URL it redirects to in BRIDGE_*_SEND_URLS if that is the path meant',
        );
      else logger.debug({ err, path: path.label }, 'send-only path refused or failed a send');
    } finally {
      path.inFlight--;
    }
  }
}

function isRedirect(err: unknown): boolean {
  const status = isBridgeError(err, 'CHAIN__RPC_FAILED') ? err.context.status : undefined;
  return status !== undefined && status >= 300 && status < 400;
}

/** The first signature of a signed transaction's wire bytes (a compact-u16 count, then 64-byte signatures), in base58. */
function firstSignature(wire: Uint8Array): string {
  // The count is 1 for every transaction the crank signs, but its encoding takes 1 to 3 bytes.
  let offset = 1;
  while (offset < 3 && ((wire[offset - 1] ?? 0) & 0x80) !== 0) offset += 1;
  return bs58.encode(wire.subarray(offset, offset + 64));
}

function zeroPathCounters(metrics: Metrics, chain: ChainSide, path: string): void {
  for (const outcome of ['accepted', 'failed']) metrics.sendPathSends.inc({ chain, path, outcome }, 0);
  metrics.sendPathLanded.inc({ chain, path }, 0);
}

/**
 * Which paths accepted each version of one transaction, to credit a landing only to a path that
 * could have caused it. Which copy the leader took is not visible to the server: when several
 * paths (the read endpoints included) accepted the landed version, any of them may have carried
 * it, and a path that accepts and drops everything would be credited with what the others
 * carried. So a landing is credited to a path only when that path alone accepted the landed
 * version with the transaction's own signature (the landing itself is seen through the read
 * endpoints' statuses, never on a path's word): the read endpoints refused or failed it, and
 * this path's copy is the only one that can have reached the leader.
 */
export class PathAcceptances {
  readonly #paths = new Map<string, Set<string>>();

  accepted(signature: string, label: string): void {
    const paths = this.#paths.get(signature) ?? new Set<string>();
    paths.add(label);
    this.#paths.set(signature, paths);
  }

  /** The paths a landing of `signature` is credited to: the one path that alone accepted it, or none. */
  pathsOf(signature: string): string[] {
    const paths = [...(this.#paths.get(signature) ?? [])];
    return paths.length === 1 ? paths : [];
  }
}
